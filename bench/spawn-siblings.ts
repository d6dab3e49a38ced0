/**
 * The siblings phase of `bench/spawn.ts` (../shared/BENCH.md): the cycle with 1,000 live siblings
 * under the same parent, with the latency phase's warm-up and count so the two compare; its
 * control (the same procedure with no sibling kept); and a same-process ratio.
 */
import { getHeapSpaceStatistics } from 'node:v8'
import { mainThreadFaults } from './main-thread.ts'
import { alternatingBlocks, type Bench, keepChildren, median, percentile, setupHost, type Variant, variantOptions } from './spawn-host.ts'

interface SiblingsWindow {
  p50: number
  p95: number
  /** The main thread's minor page faults in the timed window (`null` off Linux). */
  faults: number | null
  /** V8's young-generation size when the window starts. */
  youngGeneration: number | null
}

/**
 * BENCH.md's window: 1,000 warm-up cycles, a quiesce (full GC), 10,000 timed cycles. The page
 * faults and young-generation size tell apart a window that pays the first touch of pages V8 has
 * just grown its young generation by (≈ 18 µs a fault on this VM) from one that does not.
 */
async function siblingsWindow(bench: Bench, scale: (n: number) => number): Promise<SiblingsWindow> {
  for (let i = 0; i < scale(1000); i++) await bench.cycle()
  await bench.quiesce()
  const youngGeneration = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? null
  const faultsBefore = mainThreadFaults()
  const count = scale(10000)
  const samples = new Array<number>(count)
  for (let i = 0; i < count; i++) samples[i] = await bench.cycle()
  const faultsAfter = mainThreadFaults()
  samples.sort((a, b) => a - b)
  return {
    p50: percentile(samples, 50),
    p95: percentile(samples, 95),
    faults: faultsBefore === null || faultsAfter === null ? null : faultsAfter - faultsBefore,
    youngGeneration,
  }
}

/** The siblings phase: keys `cycle_p50_us_with_1000_live_siblings`, `cycle_p95_us_with_1000_live_siblings` and what explains them. */
export async function siblingsPhase(bench: Bench, variant: Variant, scale: (n: number) => number): Promise<Record<string, number | null>> {
  const siblings = await keepChildren(bench, 1000)
  const window = await siblingsWindow(bench, scale)
  const sameProcess = await siblingsRatio(bench, variant, scale)
  await Promise.all(siblings.map((run) => run.dispose()))
  return {
    cycle_p50_us_with_1000_live_siblings: window.p50,
    cycle_p95_us_with_1000_live_siblings: window.p95,
    siblings_window_page_faults: window.faults,
    siblings_window_young_generation_bytes: window.youngGeneration,
    ...sameProcess,
  }
}

/**
 * The siblings procedure with no sibling: 1,000 cycles (each child disposed as soon as its result
 * is in) where the siblings phase starts and keeps 1,000, then the same window. Its p50 over the
 * latency phase's is what the window's place in the process's life costs; the siblings p50 over
 * this one, what the live siblings cost.
 */
export async function siblingsControl(bench: Bench, scale: (n: number) => number): Promise<Record<string, number | null>> {
  for (let i = 0; i < 1000; i++) await bench.cycle()
  const window = await siblingsWindow(bench, scale)
  return {
    cycle_p50_us_siblings_procedure_without_siblings: window.p50,
    siblings_control_window_young_generation_bytes: window.youngGeneration,
  }
}

/**
 * The siblings figure as a same-process ratio: the host holding the siblings and a second host
 * without any, in alternating blocks so both see the same machine noise and JIT state.
 */
async function siblingsRatio(bench: Bench, variant: Variant, scale: (n: number) => number): Promise<Record<string, number>> {
  const alone = await setupHost(variant, variantOptions(variant))
  for (let i = 0; i < scale(1000); i++) await alone.cycle()
  await alone.quiesce()
  const [without, withSiblings] = await alternatingBlocks(alone, bench, scale(12))
  const p50Without = median(without)
  return {
    cycle_p50_us_without_siblings_same_process: p50Without,
    siblings_cycle_p50_ratio: median(withSiblings) / p50Without,
  }
}
