/**
 * Where the plain spawn cycle's tail comes from (issue 15): the cycle of bench/spawn.ts (BENCH.md
 * "One cycle", plain variant), counted instead of timed. Prints one JSON line:
 * - `alloc_bytes_per_cycle`: median `heapUsed` growth over blocks of 20 cycles, each block
 *   started right after a full GC (20 cycles fit in the young generation, so no GC runs inside);
 * - `old_space_growth_bytes_per_cycle`, `scavenges_per_10k_cycles`, `major_gcs_per_10k_cycles`:
 *   old-space growth over 10,000 cycles started after a full GC (promotion, and anything V8
 *   allocates there directly; a major GC inside the window is counted, and makes the growth an
 *   underestimate). `--trace-gc-nvp`'s `promoted=` gives promotion alone;
 * - `retained_bytes_after_10k_cycles`: heap after a full GC, less the heap before the window;
 * - `cpu_us_per_cycle`: the process's CPU time over the 10,000 cycles (GC and compiler threads
 *   included), per cycle: unlike wall time, it leaves out the time other processes hold the cores.
 * `--profile=<file>` also writes a sampling heap profile (`.heapprofile`, open it in Chrome's
 * DevTools) of the objects that survived a scavenge during the window (the promoted ones), or with
 * `--all` of every sampled allocation. The profiler changes what survives: read its figures apart.
 * `--structured` runs the structured variant's cycle instead (`StructuredOutput` loaded, an output
 * schema on every start, the child answering with one valid capture), as bench/spawn.ts's.
 * Run: `node --expose-gc --import tsx bench/cycle-gc.ts [--budget] [--structured] [--profile=promoted.heapprofile [--all]]`.
 */
import { writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'
import { type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks'
import { getHeapSpaceStatistics } from 'node:v8'
import { InProcessRun } from '../plugins/inprocess-run/index.ts'
import { fullGc } from './heap.ts'
import { printSummary, runBenchmark } from './report.ts'
import { scriptedHost } from './scripted-host.ts'

const args = process.argv.slice(2)
const profileFile = args.find((arg) => arg.startsWith('--profile='))?.slice('--profile='.length)
// `--all`: the profile keeps every sampled allocation, not only the promoted ones
const profileAll = args.includes('--all')
// `--budget`: TreeBudget loaded with limits never reached, for its share of the counts
const withBudget = args.includes('--budget')
// `--structured`: the structured variant's cycle (bench/spawn.ts `--variant=structured`)
const structured = args.includes('--structured')
const outputSchema = {
  type: 'object',
  properties: { answer: { type: 'string' } },
  required: ['answer'],
  additionalProperties: false,
}

function oldSpaceUsed(): number {
  return getHeapSpaceStatistics().find((space) => space.space_name === 'old_space')?.space_used_size ?? 0
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.ceil(sorted.length / 2) - 1]
}

async function main(): Promise<void> {
  const started = performance.now()
  const root = await scriptedHost()
  await root.plugin(InProcessRun)
  if (withBudget) {
    const { default: TreeBudget } = await import('../plugins/tree-budget/index.ts')
    // set, so every check runs, and never reached (as bench/spawn.ts's budget variant)
    await root.plugin(TreeBudget, { maxConcurrent: 1e9, maxChildren: 1e12, maxTokens: 1e12, maxModelRequests: 1e12 })
  }
  if (structured) {
    const { default: StructuredOutput } = await import('../plugins/structured-output/index.ts')
    await root.plugin(StructuredOutput)
  }
  const answer = { text: 'ok', usage: { inputTokens: 16, outputTokens: 1 } }
  const capture = { toolCalls: [{ id: 'c1', name: 'structured_output', arguments: '{"answer":"ok"}' }], usage: answer.usage }
  root.scripted.repeat(structured ? (request) => (request.tools?.length ? capture : answer) : answer)
  const { agent: parent } = await root.agents.create({ agentOptions: { provider: 'scripted', model: 'bench' } })
  // services are read once, as a plugin holding them would: in cordis every property read of a
  // service on a context is a lookup that builds a stack-capturing Error, the harness's cost and
  // not the cycle's (about a fifth of the sequential loop's CPU profile)
  const runner = root.inprocessRun
  const { agents, sessions } = root
  let n = 0
  // the cycle of bench/spawn.ts, without its timing
  const cycle = async (): Promise<void> => {
    const label = `task ${++n}`
    const signal = new AbortController().signal
    const run = await runner.spawn(structured ? { parent, prompt: label, label, signal, outputSchema } : { parent, prompt: label, label, signal })
    const result = await run.result
    if (result.stopReason !== 'completed') throw new Error(`cycle ended ${result.stopReason}`)
    if (structured && (result.structured as { answer?: string } | undefined)?.answer !== 'ok') throw new Error('no structured value')
    await run.dispose()
    if (agents.get(run.id) || sessions.get(run.id)) throw new Error('child survived dispose')
  }
  for (let i = 0; i < 1000; i++) await cycle()

  const perBlock: number[] = []
  for (let block = 0; block < 50; block++) {
    await fullGc()
    const before = process.memoryUsage().heapUsed
    for (let i = 0; i < 20; i++) await cycle()
    perBlock.push((process.memoryUsage().heapUsed - before) / 20)
  }

  const gcs = { minor: 0, major: 0 }
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind
      // perf_hooks.constants: NODE_PERFORMANCE_GC_MINOR = 1, MAJOR = 4, INCREMENTAL = 8
      if (kind === 1) gcs.minor++
      else if (kind === 4 || kind === 8) gcs.major++
    }
  })
  const session = profileFile ? new Session() : undefined
  if (session) {
    session.connect()
    await session.post('HeapProfiler.startSampling', {
      samplingInterval: 512,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: profileAll,
    })
  }
  await fullGc()
  observer.observe({ entryTypes: ['gc'] })
  const heapBefore = process.memoryUsage().heapUsed
  const oldBefore = oldSpaceUsed()
  const count = 10000
  const cpuBefore = process.cpuUsage()
  for (let i = 0; i < count; i++) await cycle()
  const cpu = process.cpuUsage(cpuBefore)
  const oldAfter = oldSpaceUsed()
  if (session) {
    const { profile } = await session.post('HeapProfiler.stopSampling')
    writeFileSync(profileFile!, JSON.stringify(profile))
    session.disconnect()
  }
  // let the observer hear the window's last collections before counting
  await new Promise((resolve) => setTimeout(resolve, 50))
  observer.disconnect()
  await fullGc()
  const retained = process.memoryUsage().heapUsed - heapBefore
  printSummary(
    {
      alloc_bytes_per_cycle: Math.round(median(perBlock)),
      old_space_growth_bytes_per_cycle: Math.round((oldAfter - oldBefore) / count),
      scavenges_per_10k_cycles: gcs.minor,
      major_gcs_per_10k_cycles: gcs.major,
      retained_bytes_after_10k_cycles: retained,
      cpu_us_per_cycle: Math.round(((cpu.user + cpu.system) / count) * 10) / 10,
    },
    started,
    false,
  )
}

runBenchmark(main)
