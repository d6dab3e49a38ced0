/**
 * Where in BENCH.md's latency window the plain cycle's tail lies. The window is the
 * latency phase's: one sanity cycle, 1,000 warm-up cycles, a full GC, 10,000 timed cycles, each
 * sample kept; `--steady` gives it the steady phase's 20,000 warm-up cycles instead, and
 * `--without-gc` leaves the full GC out (the control: what the window reads when V8 keeps the
 * optimized code the GC would throw away). Prints one JSON line:
 * - `cycle_p50_us`, `cycle_p95_us`, `cycle_p99_us`, `p95_over_p50`, `p99_over_p50`: as
 *   bench/spawn.ts's latency and steady phases compute them;
 * - `blocks`: one entry per 1,000 window cycles: its own p50 (`p50_us`) and mean (`mean_us`), how many of its samples
 *   are in the window's top 5 % and top 1 % (at or above its p95: `top5`; its p99: `top1`), and the minor page faults the main
 *   thread took in it (`faults`; Linux only, else `null`), and the young generation's physical size
 *   at its end (`young_physical_kb`: V8 counts a page of the new space once allocation first reached
 *   it; its growth in a block is the new space's pages touched there for the first time, each a
 *   page fault);
 * - `top5_in_first_3000`: the share of the top 5 % that falls in the window's first 3,000 cycles;
 * - `steady_p50_us`: the p50 of the window's second half;
 * - `window_wall_ms` and `window_cpu_ms`: the window's wall time, and its CPU time, of the whole
 *   process (GC and compiler threads included) and of the main thread (Linux only, in 10 ms
 *   ticks, else `null`): a main thread with less CPU than wall time waited for a core.
 * `--tiering` runs the window in a child process under V8's `--trace-opt --trace-deopt` and adds,
 * per block and for the full GC (`full_gc`; `before_window` under `--without-gc`), the TurboFan compilations that completed (`turbofan`) and the
 * optimized functions V8 threw away (`deoptimized`: eager bailouts, and code marked for
 * deoptimization, e.g. when the hidden classes it depends on die in the GC). The trace slows the
 * run, so read its timings apart. `--structured` times the structured variant's cycle, `--full`
 * the `full` variant's production host (its quiesce, not a bare GC, before the window), and
 * `--siblings` keeps 1,000 children of the parent live first, as the siblings phase does.
 * `--profile=<prefix>` writes CPU profiles (open them in Chrome's DevTools) of window cycles
 * 0–1,999 (`<prefix>-0.cpuprofile`: mostly baseline code) and 7,000–8,999 (`<prefix>-7000…`:
 * steady); the profiler slows the cycle, so read its timings apart too.
 * Run: `node --expose-gc --import tsx bench/window.ts [--steady] [--without-gc] [--tiering] [--structured | --full] [--siblings] [--profile=<prefix>]`.
 */
import { spawnSync } from 'node:child_process'
import { getHeapSpaceStatistics } from 'node:v8'
import { writeFileSync } from 'node:fs'
import { Session } from 'node:inspector/promises'
import { fileURLToPath } from 'node:url'
import { benchCycle } from './cycle.ts'
import { fullGc } from './heap.ts'
import { mainThreadCpuMs, mainThreadFaults } from './main-thread.ts'
import { printSummary, runBenchmark } from './report.ts'
import { keepChildren, setupHost, variantOptions } from './spawn-host.ts'
import { percentile } from './stats.ts'

const args = process.argv.slice(2)
const structured = args.includes('--structured')
const tiering = args.includes('--tiering')
const full = args.includes('--full')
const siblings = args.includes('--siblings')
const steady = args.includes('--steady')
const withoutGc = args.includes('--without-gc')
/** The flags a `--tiering` child is given again. */
const hostFlags = args.filter((arg) => ['--structured', '--full', '--siblings', '--steady', '--without-gc'].includes(arg))
// set in the traced child: it prints block markers between V8's trace lines instead of a summary
const marking = args.includes('--marks')
// `--profile=<prefix>`: CPU profiles of window cycles 0–1,999 and 7,000–8,999
const profilePrefix = args.find((arg) => arg.startsWith('--profile='))?.slice('--profile='.length)
const PROFILED = [
  [0, 2000],
  [7000, 9000],
] as const
const WARM_UP = steady ? 20000 : 1000
const WINDOW = 10000
const BLOCK = 1000
const MARK = '@@window '

interface Block {
  p50_us: number
  /** Its mean: what the window's cycles per second add up from. */
  mean_us: number
  top5: number
  top1: number
  faults: number | null
  young_physical_kb: number
  turbofan?: number
  deoptimized?: number
}


function sorted(values: readonly number[]): number[] {
  return [...values].sort((a, b) => a - b)
}

interface Window {
  samples: number[]
  /** The main thread's fault count at every block boundary. */
  faults: (number | null)[]
  /** The new space's physical size (KB) at every block's end. */
  youngKb: number[]
  /** CPU time over the window: the whole process's (GC and compiler threads included), and the main thread's. */
  cpuMs: { process: number; mainThread: number | null }
  wallMs: number
}

/** The new space's physical size in KB: the pages of its semi-spaces that allocation has reached so far. */
function youngPhysicalKb(): number {
  const space = getHeapSpaceStatistics().find((entry) => entry.space_name === 'new_space')
  return space ? Math.round(space.physical_space_size / 1024) : 0
}

/** Starts or stops the profiler at the edges of `PROFILED`; a stopped profile is written to `<prefix>-<from>.cpuprofile`. */
async function profileAt(profiler: Session, cycle: number): Promise<void> {
  for (const [from, to] of PROFILED) {
    if (cycle === from) await profiler.post('Profiler.start')
    if (cycle === to) {
      const { profile } = await profiler.post('Profiler.stop')
      writeFileSync(`${profilePrefix}-${from}.cpuprofile`, JSON.stringify(profile))
    }
  }
}

/** The cycle the window times, and what runs between the warm-up and the window. */
async function windowHost(): Promise<{ cycle: () => Promise<unknown>; quiesce: () => Promise<void> }> {
  const turn = () => new Promise<void>((resolve) => setImmediate(resolve))
  if (!full && !siblings) return { cycle: await benchCycle({ structured }), quiesce: withoutGc ? turn : fullGc }
  const variant = full ? 'full' : structured ? 'structured' : 'plain'
  const bench = await setupHost(variant, variantOptions(variant))
  if (siblings) await keepChildren(bench, 1000)
  // the control keeps the quiesce's flush and span drop, so only the GC is left out
  const flushOnly = async () => {
    await bench.flush()
    bench.dropSpans()
    await turn()
  }
  return { cycle: bench.cycle, quiesce: withoutGc ? flushOnly : bench.quiesce }
}

/** Runs the window, keeping every sample (µs). */
async function timedWindow(): Promise<Window> {
  const { cycle, quiesce } = await windowHost()
  const timed = async () => {
    const t0 = performance.now()
    await cycle()
    return (performance.now() - t0) * 1000
  }
  await timed() // sanity
  for (let i = 0; i < WARM_UP; i++) await timed()
  if (marking) process.stdout.write(`${MARK}gc\n`)
  await quiesce()
  const samples = new Array<number>(WINDOW)
  const faults: (number | null)[] = []
  const youngKb: number[] = []
  const cpuBefore = process.cpuUsage()
  const mainBefore = mainThreadCpuMs()
  const profiler = profilePrefix ? new Session() : undefined
  if (profiler) {
    profiler.connect()
    await profiler.post('Profiler.enable')
    await profiler.post('Profiler.setSamplingInterval', { interval: 50 })
  }
  const wall = performance.now()
  for (let i = 0; i < WINDOW; i++) {
    if (profiler) await profileAt(profiler, i)
    if (i % BLOCK === 0) {
      if (i > 0) youngKb.push(youngPhysicalKb())
      faults.push(mainThreadFaults())
      if (marking) process.stdout.write(`${MARK}block ${i / BLOCK}\n`)
    }
    samples[i] = await timed()
  }
  const wallMs = Math.round(performance.now() - wall)
  profiler?.disconnect()
  faults.push(mainThreadFaults())
  youngKb.push(youngPhysicalKb())
  const cpu = process.cpuUsage(cpuBefore)
  const mainAfter = mainThreadCpuMs()
  if (marking) process.stdout.write(`${MARK}end\n`)
  const mainThread = mainBefore === null || mainAfter === null ? null : mainAfter - mainBefore
  return { samples, faults, youngKb, cpuMs: { process: Math.round((cpu.user + cpu.system) / 1000), mainThread }, wallMs }
}

/** Counts V8's trace lines between the child's markers: `gc` (the full GC), then `block 0`… */
function countTiering(trace: string): Map<string, { turbofan: number; deoptimized: number }> {
  const counts = new Map<string, { turbofan: number; deoptimized: number }>()
  let section: string | undefined
  for (const line of trace.split('\n')) {
    if (line.startsWith(MARK)) {
      section = line.slice(MARK.length)
      counts.set(section, { turbofan: 0, deoptimized: 0 })
      continue
    }
    const count = section === undefined ? undefined : counts.get(section)
    if (!count) continue
    if (line.startsWith('[completed optimizing') && line.includes('TURBOFAN')) count.turbofan++
    else if (line.startsWith('[bailout (kind:') || line.startsWith('[marking dependent code')) count.deoptimized++
  }
  return counts
}

/** The same window in a child under `--trace-opt --trace-deopt`; its counts by section. */
function tracedWindow(): Map<string, { turbofan: number; deoptimized: number }> {
  const self = fileURLToPath(import.meta.url)
  const child = spawnSync(
    process.execPath,
    ['--expose-gc', '--trace-opt', '--trace-deopt', '--import', 'tsx', self, '--marks', ...hostFlags],
    { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, stdio: ['ignore', 'pipe', 'inherit'] },
  )
  if (child.status !== 0) throw new Error(`traced window exited ${child.status ?? child.signal}`)
  return countTiering(child.stdout)
}

async function main(): Promise<void> {
  const started = performance.now()
  const { samples, faults, youngKb, cpuMs, wallMs } = await timedWindow()
  if (marking) return
  const all = sorted(samples)
  const p50 = percentile(all, 50)
  const p95 = percentile(all, 95)
  const p99 = percentile(all, 99)
  const top = samples.filter((sample) => sample >= p95).length
  const traced = tiering ? tracedWindow() : undefined
  const blocks: Block[] = []
  let early = 0
  for (let start = 0, index = 0; start < WINDOW; start += BLOCK, index++) {
    const slice = samples.slice(start, start + BLOCK)
    const top5 = slice.filter((sample) => sample >= p95).length
    const top1 = slice.filter((sample) => sample >= p99).length
    if (start < 3 * BLOCK) early += top5
    const before = faults[index]
    const after = faults[index + 1]
    const tiers = traced?.get(`block ${index}`)
    blocks.push({
      p50_us: Math.round(percentile(sorted(slice), 50) * 10) / 10,
      mean_us: Math.round((slice.reduce((sum, sample) => sum + sample, 0) / slice.length) * 10) / 10,
      top5,
      top1,
      faults: before === null || after === null ? null : after - before,
      young_physical_kb: youngKb[index],
      ...(tiers ?? {}),
    })
  }
  printSummary(
    {
      cycle_p50_us: Math.round(p50 * 10) / 10,
      cycle_p95_us: Math.round(p95 * 10) / 10,
      cycle_p99_us: Math.round(p99 * 10) / 10,
      p95_over_p50: Math.round((p95 / p50) * 100) / 100,
      p99_over_p50: Math.round((p99 / p50) * 100) / 100,
      steady_p50_us: Math.round(percentile(sorted(samples.slice(WINDOW / 2)), 50) * 10) / 10,
      top5_in_first_3000: Math.round((early / top) * 100) / 100,
      window_wall_ms: wallMs,
      window_cpu_ms: { process: cpuMs.process, main_thread: cpuMs.mainThread },
      blocks,
      ...(traced ? { [withoutGc ? 'before_window' : 'full_gc']: traced.get('gc') } : {}),
      variant: `${full ? 'full' : structured ? 'structured' : 'plain'}${siblings ? ' with 1000 live siblings' : ''}`,
      window: `${WARM_UP} warm-up cycles, ${withoutGc ? 'no full GC' : 'a full GC'}`,
    },
    started,
    false,
  )
}

runBenchmark(main)
