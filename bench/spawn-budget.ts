/**
 * The budget variant's own phases of `bench/spawn.ts`: what TreeBudget adds to the cycle, measured
 * on two hosts in one process, and the cost per start of a queue that `maxConcurrent` holds.
 */
import type { Context } from 'cordis'
import type { Agent } from '../lib/types.ts'
import { fullGc } from './heap.ts'
import { alternatingBlocks, type Bench, median, setupHost, unreachable } from './spawn-host.ts'

/**
 * The cost TreeBudget adds to the cycle, from two hosts in one process: the block p50s of
 * `alternatingBlocks` and the median of paired per-cycle differences (order flipped every pair, for
 * the reason `alternatingBlocks` gives). On a loaded machine the block p50s sit on the steep part of
 * a wide distribution, where the median of paired differences stays put.
 */
async function overheadFigures(plain: Bench, metered: Bench, scale: (n: number) => number): Promise<{ figures: Record<string, number>; meteredCycles: number }> {
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
export async function budgetOverhead(scale: (n: number) => number): Promise<Record<string, number>> {
  const plain = await setupHost('budget', { budget: null, observer: false })
  const metered = await setupHost('budget', { budget: unreachable, observer: false })
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
  const early = await overheadFigures(plain, metered, scale)
  meteredCycles += early.meteredCycles
  await warm(scale(5000))
  const steady = await overheadFigures(plain, metered, scale)
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
export async function queuedStarts(quick: boolean): Promise<Record<string, number>> {
  const out: Record<string, number> = {}
  for (const n of quick ? [100, 1000] : [100, 1000, 10000]) {
    const bench = await setupHost('budget', { budget: { ...unreachable, maxConcurrent: 1 }, observer: false })
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
