/**
 * Where the plain spawn cycle's tail comes from: the cycle of bench/spawn.ts (BENCH.md
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
import { benchCycle } from './cycle.ts'
import { fullGc } from './heap.ts'
import { printSummary, runBenchmark } from './report.ts'
import { median } from './stats.ts'

const args = process.argv.slice(2)
const profileFile = args.find((arg) => arg.startsWith('--profile='))?.slice('--profile='.length)
// `--all`: the profile keeps every sampled allocation, not only the promoted ones
const profileAll = args.includes('--all')
// `--budget`: TreeBudget loaded with limits never reached, for its share of the counts
const withBudget = args.includes('--budget')
// `--structured`: the structured variant's cycle (bench/spawn.ts `--variant=structured`)
const structured = args.includes('--structured')

function oldSpaceUsed(): number {
  return getHeapSpaceStatistics().find((space) => space.space_name === 'old_space')?.space_used_size ?? 0
}


async function main(): Promise<void> {
  const started = performance.now()
  const cycle = await benchCycle({ budget: withBudget, structured })
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
