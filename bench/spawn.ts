/**
 * The in-process subagent cycle of ../shared/BENCH.md: spawn → result → dispose on a scripted
 * model that answers `ok` at once. Each phase runs in a fresh child process; the parent prints
 * exactly one JSON line to stdout. Run: `npm run bench` (`--quick` scales counts down for smoke
 * runs; `--variant=structured` adds an output schema and one valid capture per child, and its
 * latency phase also times a plain host in the same process, blocks interleaved, for the ratio;
 * `--variant=budget` loads TreeBudget with limits never reached, and adds two phases: the cycle
 * with and without TreeBudget in the same process, and queued starts at growing queue lengths;
 * `--variant=tracing` loads `Tracing` with no tracer provider registered, i.e. the API's no-op, and
 * its latency phase also times a plain host in the same process, blocks interleaved, for the ratio;
 * `--variant=inspector` loads `Inspector` serving a 1,000-agent tree to one connected event-stream
 * client, and its latency phase times the same tree without it in the same process;
 * `--variant=approvals` loads `Approvals` with its default policy, every call allowed, and its
 * latency phase also times a plain host in the same process, blocks interleaved, for the ratio;
 * `--variant=postgres` runs two phases of bench/postgres-variant.ts on a throwaway local server:
 * the cycle with `SessionPostgres` beside `SessionFiles`, and the append rate of 100 agents).
 * The siblings phase also reports its window's main-thread page faults and V8's young-generation
 * size, which tell its two modes apart on Node 22 (README Known limits); the siblings-control phase
 * runs the same procedure without siblings, which splits the siblings figure into what the live
 * siblings cost and what its window's early place in the process costs (`siblingsControl`).
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { getHeapSpaceStatistics } from 'node:v8'
import { Context } from 'cordis'
import { Host } from '../plugins/host/index.ts'
import { InProcessRun } from '../plugins/inprocess-run/index.ts'
import { ScriptedModel } from '../plugins/scripted-model/index.ts'
import type { Agent, SubagentRun, SubagentStartRequest } from '../lib/types.ts'
import { fullGc, heapAfterGc } from './heap.ts'
import { mainThreadFaults } from './main-thread.ts'
import { loadStore, type StoreKind, startBenchServer, storeAppends, storeLatency } from './postgres-variant.ts'

type Phase = 'latency' | 'throughput' | 'hold' | 'leak' | 'siblings' | 'siblings-control' | 'budget-overhead' | 'queue' | 'appends'
const basePhases: Phase[] = ['latency', 'throughput', 'hold', 'leak', 'siblings', 'siblings-control']

const args = process.argv.slice(2)
const quick = args.includes('--quick')
const variant = args.find((arg) => arg.startsWith('--variant='))?.slice('--variant='.length) ?? 'plain'
const phaseArg = args.find((arg) => arg.startsWith('--phase='))?.slice('--phase='.length) as Phase | undefined
const scale = (n: number) => (quick ? Math.max(10, Math.ceil(n / 20)) : n)
const phases: Phase[] =
  variant === 'budget' ? [...basePhases, 'budget-overhead', 'queue'] : variant === 'postgres' ? ['latency', 'appends'] : basePhases
// set, so every check runs, and never reached
const unreachable = { maxConcurrent: 1e9, maxChildren: 1e12, maxTokens: 1e12, maxModelRequests: 1e12 }

function percentile(sorted: number[], p: number): number {
  return sorted[Math.ceil((p / 100) * sorted.length) - 1]
}
function median(values: number[]): number {
  return percentile([...values].sort((a, b) => a - b), 50)
}
const log = (message: string) => process.stderr.write(`${message}\n`)

const outputSchema = {
  type: 'object',
  properties: { answer: { type: 'string' } },
  required: ['answer'],
  additionalProperties: false,
}

/** What a benchmark host loads beyond the driver; `null` budget = no TreeBudget. */
interface HostOptions {
  budget: Record<string, number> | null
  observer: boolean
  /** StructuredOutput loaded and an output schema on every start (default: the structured variant). */
  structured?: boolean
  /** A session store loaded (the postgres variant): every cycle's child is written. */
  store?: StoreKind
}

async function setupHost(
  { budget, observer, structured = variant === 'structured', store }: HostOptions = {
    budget: variant === 'budget' ? unreachable : null,
    observer: variant === 'tracing' || variant === 'inspector' || variant === 'approvals',
  },
) {
  const root = new Context()
  await root.plugin(Host, { maxSteps: 32 })
  await root.plugin(ScriptedModel, { provider: 'scripted', record: false })
  await root.plugin(InProcessRun)
  if (structured) {
    const { default: StructuredOutput } = await import('../plugins/structured-output/index.ts')
    await root.plugin(StructuredOutput)
  }
  if (budget) {
    const { default: TreeBudget } = await import('../plugins/tree-budget/index.ts')
    await root.plugin(TreeBudget, budget)
  }
  if (observer && variant === 'inspector') {
    const { default: Inspector } = await import('../plugins/inspector/index.ts')
    await root.plugin(Inspector, {})
  }
  if (observer && variant === 'approvals') {
    const { default: Approvals } = await import('../plugins/approvals/index.ts')
    await root.plugin(Approvals, { default: 'allow', readOnly: 'allow', rules: [], children: 'route' })
  }
  if (observer && variant === 'tracing') {
    const { default: Tracing } = await import('../plugins/tracing/index.ts')
    await root.plugin(Tracing, {})
  }
  const flush = store ? await loadStore(root, store) : async () => {}
  const answer = { text: 'ok', usage: { inputTokens: 16, outputTokens: 1 } }
  const capture = { toolCalls: [{ id: 'c1', name: 'structured_output', arguments: '{"answer":"ok"}' }], usage: answer.usage }
  root.scripted.repeat(structured ? (request) => (request.tools?.length ? capture : answer) : answer)
  const handle = await root.agents.create({ agentOptions: { provider: 'scripted', model: 'bench' } })
  // services are read once, as a plugin holding them would: in cordis every property read of a
  // service on a context is a lookup that builds a stack-capturing Error, the harness's cost and
  // not the cycle's (about a fifth of the sequential loop's CPU profile)
  const runner = root.inprocessRun
  const { agents, sessions } = root
  let n = 0
  const request = (parent: Agent): SubagentStartRequest => {
    const label = `task ${++n}`
    return {
      parent,
      prompt: label,
      label,
      signal: new AbortController().signal,
      ...(structured ? { outputSchema } : {}),
    }
  }
  const check = (result: Awaited<SubagentRun['result']>) => {
    const text = result.output[0]?.type === 'text' ? result.output[0].text : undefined
    if (result.stopReason !== 'completed') throw new Error(`cycle ended ${result.stopReason}: ${result.diagnostic}`)
    if (structured ? (result.structured as { answer?: string })?.answer !== 'ok' : text !== 'ok') {
      throw new Error(`unexpected result ${JSON.stringify(result)}`)
    }
  }
  /** One cycle; resolves with its duration in µs. The child's absence is checked after timing. */
  const cycle = async (): Promise<number> => {
    const t0 = performance.now()
    const run = await runner.spawn(request(handle.agent))
    check(await run.result)
    await run.dispose()
    const elapsed = (performance.now() - t0) * 1000
    if (agents.get(run.id) || sessions.get(run.id)) throw new Error('child survived dispose')
    return elapsed
  }
  return { root, parent: handle.agent, runner, request, check, cycle, flush }
}

/**
 * Cycle times (µs) of two hosts, `blocks` blocks of 250 cycles each, alternating so both see the
 * same machine noise and JIT state. The order flips every block (A B, B A, …): whichever host runs
 * second in a pair reads 1.5–2 % slower (two identical plain hosts measured this way: +1.4 to
 * +2.0 %), a bias that a fixed order charges to one host.
 */
async function alternatingBlocks(
  first: { cycle(): Promise<number> },
  second: { cycle(): Promise<number> },
  blocks: number,
): Promise<[number[], number[]]> {
  const firstTimes: number[] = []
  const secondTimes: number[] = []
  for (let b = 0; b < blocks; b++) {
    const [lead, lag, leadTimes, lagTimes] =
      b % 2 === 0 ? [first, second, firstTimes, secondTimes] : [second, first, secondTimes, firstTimes]
    for (let i = 0; i < 250; i++) leadTimes.push(await lead.cycle())
    for (let i = 0; i < 250; i++) lagTimes.push(await lag.cycle())
  }
  return [firstTimes, secondTimes]
}

/**
 * The cost TreeBudget adds to the cycle, from two hosts in one process: the block p50s of
 * `alternatingBlocks` and the median of paired per-cycle differences (order flipped every pair, for
 * the reason `alternatingBlocks` gives). On a loaded machine the block p50s sit on the steep part of
 * a wide distribution, where the median of paired differences stays put.
 */
async function overheadFigures(plain: Bench, metered: Bench): Promise<{ figures: Record<string, number>; meteredCycles: number }> {
  await fullGc()
  const [without, withBudget] = await alternatingBlocks(plain, metered, scale(40))
  const differences: number[] = []
  for (let i = 0; i < scale(5000); i++) {
    if (i % 2 === 0) {
      const plainCycle = await plain.cycle()
      differences.push((await metered.cycle()) - plainCycle)
    } else {
      const meteredCycle = await metered.cycle()
      differences.push(meteredCycle - (await plain.cycle()))
    }
  }
  const p50Without = median(without)
  const p50With = median(withBudget)
  return {
    figures: {
      p50_us_without: p50Without,
      p50_us_with: p50With,
      overhead_pct: ((p50With - p50Without) / p50Without) * 100,
      paired_difference_us: median(differences),
      overhead_pct_paired: (median(differences) / p50Without) * 100,
    },
    meteredCycles: withBudget.length + differences.length,
  }
}

/**
 * The latency cycle on two hosts in one process, without and with TreeBudget: once after
 * BENCH.md's 1,000 warm-up cycles (`budget_cycle_*`), and again at steady state, after 5,000 more
 * (`budget_cycle_*_steady`). A function the cycle runs once gets TurboFan code only after a few
 * thousand cycles, and the budget's own functions run on one host where the shared ones run on
 * both, so after 1,000 cycles the first figure also counts which host's code is optimized yet.
 */
async function budgetOverhead(): Promise<Record<string, number>> {
  const plain = await setupHost({ budget: null, observer: false })
  const metered = await setupHost({ budget: unreachable, observer: false })
  await plain.cycle()
  await metered.cycle()
  let meteredCycles = 1
  const warm = async (count: number) => {
    for (let i = 0; i < count; i++) {
      await plain.cycle()
      await metered.cycle()
    }
    meteredCycles += count
  }
  await warm(scale(1000))
  const early = await overheadFigures(plain, metered)
  meteredCycles += early.meteredCycles
  await warm(scale(5000))
  const steady = await overheadFigures(plain, metered)
  meteredCycles += steady.meteredCycles
  // the metered host must really have metered every cycle
  const counted = (metered.root as Context & { treeBudget: { usage(agent: Agent): { children: number } } }).treeBudget.usage(metered.parent).children
  if (counted !== meteredCycles) throw new Error(`TreeBudget counted ${counted} of ${meteredCycles} children`)
  const out: Record<string, number> = {}
  for (const [key, value] of Object.entries(early.figures)) out[`budget_cycle_${key}`] = value
  for (const [key, value] of Object.entries(steady.figures)) out[`budget_cycle_${key}_steady`] = value
  return out
}

/**
 * Starts issued back to back under `maxConcurrent: 1`, so all but one wait in line: the cost per
 * start at each queue length (flat means O(1) per start).
 */
async function queuedStarts(): Promise<Record<string, number>> {
  const out: Record<string, number> = {}
  for (const n of quick ? [100, 1000] : [100, 1000, 10000]) {
    const bench = await setupHost({ budget: { ...unreachable, maxConcurrent: 1 }, observer: false })
    await bench.cycle()
    await fullGc()
    const t0 = performance.now()
    const cycles: Promise<void>[] = []
    for (let i = 0; i < n; i++) {
      cycles.push(
        bench.runner.spawn(bench.request(bench.parent)).then(async (run) => {
          bench.check(await run.result)
          await run.dispose()
        }),
      )
    }
    await Promise.all(cycles)
    out[`budget_queued_start_us_at_${n}`] = ((performance.now() - t0) * 1000) / n
  }
  return out
}

async function runPhase(phase: Phase): Promise<Record<string, number | null>> {
  if (phase === 'budget-overhead') return budgetOverhead()
  if (phase === 'queue') return queuedStarts()
  if (phase === 'appends') return storeAppends(scale)
  if (phase === 'latency' && variant === 'postgres') return storeLatency((kind) => setupHost({ budget: null, observer: false, store: kind }), scale)
  const bench = await setupHost()
  await bench.cycle() // sanity
  if (phase === 'latency' && variant === 'tracing') return sameProcessLatency(bench, 'tracing')
  if (phase === 'latency' && variant === 'structured') return sameProcessLatency(bench, 'structured')
  if (phase === 'latency' && variant === 'approvals') return sameProcessLatency(bench, 'approvals')
  if (phase === 'latency' && variant === 'inspector') return inspectorLatency(bench)
  if (phase === 'latency') {
    for (let i = 0; i < scale(1000); i++) await bench.cycle()
    await fullGc()
    const count = scale(10000)
    const samples = new Array<number>(count)
    const wall = performance.now()
    for (let i = 0; i < count; i++) samples[i] = await bench.cycle()
    const elapsed = performance.now() - wall
    samples.sort((a, b) => a - b)
    return {
      cycle_p50_us: percentile(samples, 50),
      cycle_p95_us: percentile(samples, 95),
      cycles_per_sec_sequential: count / (elapsed / 1000),
    }
  }
  if (phase === 'throughput') {
    const out: Record<string, number> = {}
    for (const n of [100, 1000]) {
      const round = async () => {
        const t0 = performance.now()
        const cycles: Promise<number>[] = []
        for (let i = 0; i < n; i++) cycles.push(bench.cycle())
        await Promise.all(cycles)
        return performance.now() - t0
      }
      await round()
      const walls: number[] = []
      for (let r = 0; r < (quick ? 2 : 5); r++) {
        await fullGc()
        walls.push(await round())
      }
      out[`throughput_${n}_children_per_sec`] = n / (median(walls) / 1000)
    }
    return out
  }
  if (phase === 'hold') {
    const n = 1000
    if (process.env.BENCH_HOLD_WARMUP) for (let i = 0; i < 1000; i++) await bench.cycle()
    const h0 = await heapAfterGc()
    const runs = await Promise.all(Array.from({ length: n }, () => bench.runner.spawn(bench.request(bench.parent))))
    for (const run of runs) bench.check(await run.result)
    const h1 = await heapAfterGc()
    await Promise.all(runs.map((run) => run.dispose()))
    return { heap_bytes_per_live_child: (h1 - h0) / n }
  }
  if (phase === 'leak') {
    for (let i = 0; i < scale(1000); i++) await bench.cycle()
    const h0 = await heapAfterGc()
    for (let i = 0; i < scale(10000); i++) await bench.cycle()
    const h1 = await heapAfterGc()
    const remaining = bench.root.agents.list().length - 1
    if (remaining !== 0) throw new Error(`${remaining} children remain`)
    return { heap_growth_bytes_after_10k_cycles: h1 - h0 }
  }
  if (phase === 'siblings-control') return siblingsControl(bench)
  // siblings
  const siblings = await keepChildren(bench, 1000)
  const window = await siblingsWindow(bench)
  const sameProcess = await siblingsRatio(bench)
  await Promise.all(siblings.map((run) => run.dispose()))
  return {
    cycle_p50_us_with_1000_live_siblings: window.p50,
    // why this figure moves between runs (README Known limits): the first touch of young-generation
    // pages V8 has just grown costs a page fault each, about 18 µs in the CI's VM
    siblings_window_page_faults: window.faults,
    siblings_window_young_generation_bytes: window.youngGeneration,
    ...sameProcess,
  }
}

/**
 * BENCH.md's siblings window: 500 warm-up cycles, a full GC, 3,000 timed cycles; their p50, and
 * the main thread's page faults and V8's young-generation size that tell its two modes apart.
 */
async function siblingsWindow(bench: Bench): Promise<{ p50: number; faults: number | null; youngGeneration: number | null }> {
  for (let i = 0; i < scale(500); i++) await bench.cycle()
  await fullGc()
  const youngGeneration = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? null
  const faultsBefore = mainThreadFaults()
  const samples: number[] = []
  for (let i = 0; i < scale(3000); i++) samples.push(await bench.cycle())
  const faultsAfter = mainThreadFaults()
  return { p50: median(samples), faults: faultsBefore === null || faultsAfter === null ? null : faultsAfter - faultsBefore, youngGeneration }
}

/**
 * The siblings procedure with no sibling: 1,000 cycles (each child disposed as soon as its result
 * is in) where the siblings phase starts and keeps 1,000, then the same warm-up and window. The
 * window then runs the same calls at the same place in the process's life as the siblings window:
 * the cycle's functions get TurboFan code after ≈ 3,000 calls, inside this window, where the
 * latency phase's 10,000 cycles run mostly after it. So the siblings figure over this one is what
 * the live siblings cost, and this one over the latency p50 what the window's place costs.
 */
async function siblingsControl(bench: Bench): Promise<Record<string, number | null>> {
  for (let i = 0; i < 1000; i++) await bench.cycle()
  const window = await siblingsWindow(bench)
  return {
    cycle_p50_us_siblings_procedure_without_siblings: window.p50,
    siblings_control_window_young_generation_bytes: window.youngGeneration,
  }
}

/**
 * The siblings figure as a same-process ratio: the host holding the siblings and a second host
 * without any, measured in alternating blocks so both see the same machine noise and JIT state
 * (the BENCH.md figure above is compared with the latency phase's, another process).
 */
async function siblingsRatio(bench: Bench): Promise<Record<string, number>> {
  const alone = await setupHost()
  for (let i = 0; i < scale(1000); i++) await alone.cycle()
  await fullGc()
  const [without, withSiblings] = await alternatingBlocks(alone, bench, scale(12))
  const p50Without = median(without)
  return {
    cycle_p50_us_without_siblings_same_process: p50Without,
    siblings_cycle_p50_ratio: median(withSiblings) / p50Without,
  }
}

type Bench = Awaited<ReturnType<typeof setupHost>>

/**
 * The latency phase of a variant (`Tracing` loaded, or structured starts), plus the same cycle on a
 * plain host in this process: blocks of cycles alternate between the two, so machine noise falls
 * on both alike.
 */
async function sameProcessLatency(traced: Bench, name: string): Promise<Record<string, number>> {
  const plain = await setupHost({ budget: null, observer: false, structured: false })
  await plain.cycle()
  for (let i = 0; i < scale(1000); i++) {
    await traced.cycle()
    await plain.cycle()
  }
  await fullGc()
  const count = scale(10000)
  const blocks = 20
  const samples: number[] = []
  const plainSamples: number[] = []
  let tracedWall = 0
  for (let block = 0; block < blocks; block++) {
    const wall = performance.now()
    for (let i = 0; i < count / blocks; i++) samples.push(await traced.cycle())
    tracedWall += performance.now() - wall
    for (let i = 0; i < count / blocks; i++) plainSamples.push(await plain.cycle())
  }
  samples.sort((a, b) => a - b)
  plainSamples.sort((a, b) => a - b)
  const p50 = percentile(samples, 50)
  const plainP50 = percentile(plainSamples, 50)
  return {
    cycle_p50_us: p50,
    cycle_p95_us: percentile(samples, 95),
    cycles_per_sec_sequential: samples.length / (tracedWall / 1000),
    [`cycle_p50_us_without_${name}_same_process`]: plainP50,
    [`${name}_cycle_p50_ratio`]: p50 / plainP50,
  }
}

/** Starts `count` children of the bench's parent and keeps them, settled and undisposed. */
async function keepChildren(bench: Bench, count: number): Promise<SubagentRun[]> {
  const kept: SubagentRun[] = []
  for (let i = 0; i < count; i++) {
    const run = await bench.runner.spawn(bench.request(bench.parent))
    bench.check(await run.result)
    kept.push(run)
  }
  return kept
}

/**
 * A 1,000-agent tree (999 settled children kept) with `Inspector` loaded and one client reading
 * its event stream, against the same tree on a host without the Inspector (`…_ratio`: what the
 * inspector adds) and an empty plain host (`…_vs_empty_host`: what the first figures compared
 * with, the cost of 999 live siblings included). The event loop turns after every cycle, as it
 * does around a real model call, so the inspector's timers (folding, encoding, writing to the
 * client) run as they would in a host.
 * - Latency: the hosts take turns cycle by cycle (the load of a shared machine falls on all alike);
 *   p50 per host.
 * - Total cost (`inspector_cpu_ratio`): process CPU time for blocks of cycles, each followed by
 *   two flush windows of idle time so the timer work of its own cycles lands in it; CPU time,
 *   unlike wall time, does not count the time other processes hold the cores.
 */
async function inspectorLatency(bench: Bench): Promise<Record<string, number>> {
  const tree = await setupHost({ budget: null, observer: false })
  const empty = await setupHost({ budget: null, observer: false })
  const kept = [...(await keepChildren(bench, 999)), ...(await keepChildren(tree, 999))]
  const { get } = await import('node:http')
  const url = new URL('/events', (bench.root as unknown as { inspector: { url: string } }).inspector.url)
  let received = 0
  const request = get(url, (response) => response.on('data', (chunk: Buffer) => (received += chunk.length)))
  await new Promise<void>((resolve) => {
    const wait = () => (received > 0 ? resolve() : setTimeout(wait, 10))
    wait()
  })
  const turn = () => new Promise(setImmediate)
  const hosts = [bench, tree, empty]
  for (let i = 0; i < scale(1000); i++) {
    for (const host of hosts) {
      await host.cycle()
      await turn()
    }
  }
  await fullGc()
  const count = scale(10000)
  const samples: number[][] = hosts.map(() => [])
  for (let i = 0; i < count; i++) {
    for (const [h, host] of hosts.entries()) {
      samples[h]!.push(await host.cycle())
      await turn()
    }
  }
  const sent = received
  const block = scale(1000)
  const cpu = [0, 0]
  let wall = 0
  for (let b = 0; b < 10; b++) {
    for (const h of [0, 1]) {
      const cpu0 = process.cpuUsage()
      const wall0 = performance.now()
      for (let i = 0; i < block; i++) {
        await hosts[h]!.cycle()
        await turn()
      }
      if (h === 0) wall += performance.now() - wall0
      await new Promise((resolve) => setTimeout(resolve, 100))
      const used = process.cpuUsage(cpu0)
      cpu[h]! += used.user + used.system
    }
  }
  request.destroy()
  await Promise.all(kept.map((run) => run.dispose()))
  // the client must really have been sent the tree's changes while the cycles ran
  if (sent < count * 100) throw new Error(`the client was sent only ${sent} bytes`)
  for (const list of samples) list.sort((a, b) => a - b)
  const [inspected, same, plain] = samples.map((list) => percentile(list, 50)) as [number, number, number]
  return {
    cycle_p50_us: inspected,
    cycle_p95_us: percentile(samples[0]!, 95),
    cycles_per_sec_sequential: (10 * block) / (wall / 1000),
    cycle_p50_us_same_tree_without_inspector: same,
    cycle_p50_us_empty_plain_host: plain,
    inspector_cycle_p50_ratio: inspected / same,
    inspector_cycle_p50_ratio_vs_empty_host: inspected / plain,
    inspector_cpu_ratio: cpu[0]! / cpu[1]!,
  }
}

async function main(): Promise<void> {
  if (phaseArg) {
    const result = await runPhase(phaseArg)
    // a phase's hosts stay up (the inspector variant holds a listening port): the phase is over
    process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0))
    return
  }
  const started = performance.now()
  // the phases' children find the server in BENCH_POSTGRES_URL
  const stopServer = variant === 'postgres' ? await startBenchServer() : () => {}
  const self = fileURLToPath(import.meta.url)
  const summary: Record<string, unknown> = {}
  for (const phase of phases) {
    log(`bench: ${phase} (${variant}${quick ? ', quick' : ''})`)
    const out = execFileSync(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', self, `--phase=${phase}`, `--variant=${variant}`, ...(quick ? ['--quick'] : [])],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
    )
    Object.assign(summary, JSON.parse(out.trim().split('\n').pop()!))
  }
  stopServer()
  // the siblings figure split in two (siblingsControl): what the live siblings cost, and what the
  // window's place in the process's life costs
  const control = summary.cycle_p50_us_siblings_procedure_without_siblings
  if (typeof control === 'number' && typeof summary.cycle_p50_us_with_1000_live_siblings === 'number') {
    summary.siblings_over_control_p50_ratio = summary.cycle_p50_us_with_1000_live_siblings / control
  }
  if (typeof control === 'number' && typeof summary.cycle_p50_us === 'number') {
    summary.control_over_latency_p50_ratio = control / summary.cycle_p50_us
  }
  const cordisVersion = JSON.parse(readFileSync(new URL('../node_modules/cordis/package.json', import.meta.url), 'utf8')).version
  const rounded = Object.fromEntries(
    Object.entries(summary).map(([key, value]) => [key, typeof value === 'number' ? Math.round(value * 10) / 10 : value]),
  )
  process.stdout.write(
    `${JSON.stringify({
      ...rounded,
      node: process.version,
      cordis: cordisVersion,
      variant,
      ...(quick ? { quick: true } : {}),
      wall_s: Math.round((performance.now() - started) / 100) / 10,
    })}\n`,
  )
}

main().catch((error) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  process.exit(1)
})
