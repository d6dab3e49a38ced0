/**
 * The in-process subagent cycle of ../shared/BENCH.md: spawn → result → dispose on a scripted
 * model that answers `ok` at once. Each phase runs in a fresh child process; the parent prints
 * exactly one JSON line to stdout. Run: `npm run bench` (`--quick` scales counts down for smoke
 * runs). Variants (`--variant=…`) add keys, never change BENCH.md's:
 * - `structured`: an output schema and one valid capture per child; the latency phase also times
 *   a plain host in the same process, blocks interleaved, for the ratio.
 * - `full`: the production host of BENCH.md (bench/full-host.ts), plus two phases
 *   (bench/full-costs.ts): what each plugin adds to the cycle, and a CPU profile by area.
 * - `budget`: TreeBudget with limits never reached, plus its overhead and queue phases
 *   (bench/spawn-budget.ts).
 * - `tracing`: `Tracing` with no tracer provider registered (the API's no-op); `approvals`:
 *   `Approvals` allowing every call. Each latency phase also times a plain host, blocks interleaved.
 * - `inspector`: `Inspector` serving a 1,000-agent tree to one event-stream client
 *   (bench/spawn-inspector.ts).
 * - `postgres`: the cycle with `SessionPostgres` beside `SessionFiles`, and the append rate of 100
 *   agents, on a throwaway local server (bench/postgres-variant.ts).
 * The siblings phase also reports its window's page faults and young-generation size, and the
 * siblings-control phase runs the same procedure without siblings (bench/spawn-siblings.ts).
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { pluginCosts, profilePhase } from './full-costs.ts'
import { startBenchServer, storeAppends, storeLatency } from './postgres-variant.ts'
import { budgetOverhead, queuedStarts } from './spawn-budget.ts'
import { type Bench, median, percentile, setupHost, timedWindow, type Variant, variantOptions } from './spawn-host.ts'
import { inspectorLatency } from './spawn-inspector.ts'
import { siblingsControl, siblingsPhase } from './spawn-siblings.ts'

type Phase =
  | 'latency'
  | 'throughput'
  | 'hold'
  | 'leak'
  | 'steady'
  | 'siblings'
  | 'siblings-control'
  | 'budget-overhead'
  | 'queue'
  | 'appends'
  | 'plugin-costs'
  | 'profile'
const basePhases: Phase[] = ['latency', 'throughput', 'hold', 'leak', 'steady', 'siblings', 'siblings-control']
const variants: readonly Variant[] = ['plain', 'structured', 'budget', 'tracing', 'inspector', 'approvals', 'postgres', 'full']

const args = process.argv.slice(2)
const quick = args.includes('--quick')
const variantArg = args.find((arg) => arg.startsWith('--variant='))?.slice('--variant='.length) ?? 'plain'
if (!(variants as readonly string[]).includes(variantArg)) {
  process.stderr.write(`unknown variant "${variantArg}": one of ${variants.join(', ')}\n`)
  process.exit(2)
}
const variant = variantArg as Variant
const phaseArg = args.find((arg) => arg.startsWith('--phase='))?.slice('--phase='.length) as Phase | undefined
const scale = (n: number) => (quick ? Math.max(10, Math.ceil(n / 20)) : n)
const log = (message: string) => process.stderr.write(`${message}\n`)

function phasesOf(variant: Variant): Phase[] {
  if (variant === 'budget') return [...basePhases, 'budget-overhead', 'queue']
  if (variant === 'postgres') return ['latency', 'appends']
  if (variant === 'full') return [...basePhases, 'plugin-costs', 'profile']
  return basePhases
}

async function runPhase(phase: Phase, variant: Variant): Promise<Record<string, number | null>> {
  if (phase === 'budget-overhead') return budgetOverhead(scale)
  if (phase === 'queue') return queuedStarts(quick)
  if (phase === 'appends') return storeAppends(scale)
  if (phase === 'plugin-costs') return pluginCosts(scale)
  if (phase === 'latency' && variant === 'postgres') return storeLatency((kind) => setupHost(variant, { budget: null, observer: false, store: kind }), scale)
  const bench = await setupHost(variant, variantOptions(variant))
  await bench.cycle() // sanity
  if (phase === 'profile') return profilePhase(bench, scale)
  if (phase === 'latency' && (variant === 'tracing' || variant === 'structured' || variant === 'approvals')) return sameProcessLatency(bench, variant)
  if (phase === 'latency' && variant === 'inspector') return inspectorLatency(bench, scale)
  if (phase === 'latency') {
    const count = scale(10000)
    const { sorted, wallMs } = await timedWindow(bench, scale(1000), count)
    const flushMs = await provesProduction(bench, count)
    return {
      cycle_p50_us: percentile(sorted, 50),
      cycle_p95_us: percentile(sorted, 95),
      cycles_per_sec_sequential: count / (wallMs / 1000),
      // the full variant: the window's cycles with the writes and exports they left behind
      ...(variant === 'full' ? { cycles_per_sec_written: count / ((wallMs + flushMs) / 1000) } : {}),
    }
  }
  if (phase === 'steady') {
    const count = scale(10000)
    const { sorted } = await timedWindow(bench, scale(20000), count)
    await provesProduction(bench, count)
    return { cycle_p50_us_steady: percentile(sorted, 50), cycle_p95_us_steady: percentile(sorted, 95), cycle_p99_us_steady: percentile(sorted, 99) }
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
        await bench.quiesce()
        walls.push(await round())
      }
      out[`throughput_${n}_children_per_sec`] = n / (median(walls) / 1000)
    }
    return out
  }
  if (phase === 'hold') {
    const n = 1000
    if (process.env.BENCH_HOLD_WARMUP) for (let i = 0; i < 1000; i++) await bench.cycle()
    await bench.quiesce()
    const h0 = process.memoryUsage().heapUsed
    const runs = await Promise.all(Array.from({ length: n }, () => bench.runner.spawn(bench.request(bench.parent))))
    for (const run of runs) bench.check(await run.result)
    await bench.quiesce()
    const h1 = process.memoryUsage().heapUsed
    await Promise.all(runs.map((run) => run.dispose()))
    return { heap_bytes_per_live_child: (h1 - h0) / n }
  }
  if (phase === 'leak') {
    for (let i = 0; i < scale(1000); i++) await bench.cycle()
    await bench.quiesce()
    const h0 = process.memoryUsage().heapUsed
    for (let i = 0; i < scale(10000); i++) await bench.cycle()
    await bench.quiesce()
    const h1 = process.memoryUsage().heapUsed
    const remaining = bench.root.agents.list().length - 1
    if (remaining !== 0) throw new Error(`${remaining} children remain`)
    return { heap_growth_bytes_after_10k_cycles: h1 - h0 }
  }
  if (phase === 'siblings-control') return siblingsControl(bench, scale)
  return siblingsPhase(bench, variant, scale)
}

/**
 * The full variant's production plugins really did their work for a timed window of `count`
 * cycles: waits for the writes and span exports the window left behind and checks them. Resolves
 * with how long that wait took, in ms (0 for other variants).
 * The cycle never yields to the event loop (the scripted model answers at once), so file writes and
 * timer-driven exports cannot finish inside the window: a host whose model calls wait on the
 * network does this work while they wait.
 */
async function provesProduction(bench: Bench, count: number): Promise<number> {
  if (variant !== 'full') return 0
  const started = performance.now()
  await bench.flush()
  const flushMs = performance.now() - started
  // a run span and a chat span per child at least
  const spans = bench.spansRecorded()
  if (spans < 2 * count) throw new Error(`only ${spans} spans were recorded in ${count} cycles`)
  const files = await bench.filesWritten()
  if (files < count) throw new Error(`only ${files} session files were written in ${count} cycles`)
  return flushMs
}

/**
 * The latency phase of a variant (`Tracing` loaded, structured starts, `Approvals`), plus the same
 * cycle on a plain host in this process: blocks of cycles alternate between the two, so machine
 * noise falls on both alike.
 */
async function sameProcessLatency(measured: Bench, name: Variant): Promise<Record<string, number>> {
  const plain = await setupHost('plain', variantOptions('plain'))
  await plain.cycle()
  for (let i = 0; i < scale(1000); i++) {
    await measured.cycle()
    await plain.cycle()
  }
  await measured.quiesce()
  const count = scale(10000)
  const blocks = 20
  const samples: number[] = []
  const plainSamples: number[] = []
  let measuredWall = 0
  for (let block = 0; block < blocks; block++) {
    const wall = performance.now()
    for (let i = 0; i < count / blocks; i++) samples.push(await measured.cycle())
    measuredWall += performance.now() - wall
    for (let i = 0; i < count / blocks; i++) plainSamples.push(await plain.cycle())
  }
  samples.sort((a, b) => a - b)
  plainSamples.sort((a, b) => a - b)
  const p50 = percentile(samples, 50)
  const plainP50 = percentile(plainSamples, 50)
  return {
    cycle_p50_us: p50,
    cycle_p95_us: percentile(samples, 95),
    cycles_per_sec_sequential: samples.length / (measuredWall / 1000),
    [`cycle_p50_us_without_${name}_same_process`]: plainP50,
    [`${name}_cycle_p50_ratio`]: p50 / plainP50,
  }
}

async function main(): Promise<void> {
  if (phaseArg) {
    const result = await runPhase(phaseArg, variant)
    // a phase's hosts stay up (the inspector variant holds a listening port): the phase is over
    process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0))
    return
  }
  const started = performance.now()
  // the phases' children find the server in BENCH_POSTGRES_URL
  const stopServer = variant === 'postgres' ? await startBenchServer() : () => {}
  const self = fileURLToPath(import.meta.url)
  const summary: Record<string, unknown> = {}
  for (const phase of phasesOf(variant)) {
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
