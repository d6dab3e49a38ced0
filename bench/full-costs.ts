/**
 * The full variant's own phases of `bench/spawn.ts`: what each plugin of the production host adds
 * to the cycle, measured two ways in one process.
 * - `plugin-costs`: a plain host, one host per plugin (plain + that plugin), the full host and one
 *   host per plugin left out of it take turns in blocks of 250 cycles (the order rotating every
 *   round), so machine noise and JIT state fall on all alike. A plugin's cost alone is its host's
 *   p50 minus the plain host's (`cost_us_<plugin>`); its cost in the full host, interactions with
 *   the others included, is the full host's p50 minus the p50 without it (`cost_us_in_full_<plugin>`).
 * - `profile`: the full host's timed window under the sampling profiler; CPU µs per cycle by area
 *   (plugin folder, package, Node, GC).
 */
import { type FullPlugin, fullPluginsAll } from './full-host.ts'
import { profileAreas } from './cpu-areas.ts'
import { type Bench, percentile, setupHost } from './spawn-host.ts'

const keyOf = (name: string) => name.replace(/[^a-z0-9]+/gi, '_')

export async function pluginCosts(scale: (n: number) => number): Promise<Record<string, number>> {
  const hosts: { name: string; bench: Bench; samples: number[] }[] = []
  const add = async (name: string, full: readonly FullPlugin[]) =>
    hosts.push({ name, bench: await setupHost('full', { budget: null, observer: false, full }), samples: [] })
  await add('plain', [])
  for (const plugin of fullPluginsAll) await add(plugin, [plugin])
  await add('full', fullPluginsAll)
  for (const plugin of fullPluginsAll) await add(`full without ${plugin}`, fullPluginsAll.filter((other) => other !== plugin))
  for (let i = 0; i < scale(1000); i++) for (const host of hosts) await host.bench.cycle()
  for (const host of hosts) await host.bench.quiesce()
  const rounds = scale(16)
  // between rounds the writes are waited for and the spans dropped, without the full GC of
  // `quiesce()`: a forced full GC drops the hidden classes no live object holds and the
  // optimized code that depends on them, so every block after one would start cold
  for (let round = 0; round < rounds; round++) {
    for (let h = 0; h < hosts.length; h++) {
      const host = hosts[(h + round) % hosts.length]!
      for (let i = 0; i < 250; i++) host.samples.push(await host.bench.cycle())
    }
    // outside the blocks: writes done and the exporter emptied, so no round inherits another's backlog
    for (const host of hosts) await host.bench.flush()
    hosts[0]!.bench.dropSpans()
  }
  const p50 = new Map(hosts.map((host) => [host.name, percentile(host.samples.sort((a, b) => a - b), 50)]))
  const plain = p50.get('plain')!
  const out: Record<string, number> = { cost_plain_cycle_p50_us: plain, cost_full_cycle_p50_us: p50.get('full')! }
  let sum = 0
  for (const plugin of fullPluginsAll) {
    const cost = p50.get(plugin)! - plain
    sum += cost
    out[`cost_us_${keyOf(plugin)}`] = cost
  }
  out.cost_us_sum_of_plugins = sum
  out.cost_us_together_beyond_sum = p50.get('full')! - plain - sum
  // what leaving one plugin out of the full host saves: its cost with its interactions
  for (const plugin of fullPluginsAll) out[`cost_us_in_full_${keyOf(plugin)}`] = p50.get('full')! - p50.get(`full without ${plugin}`)!
  return out
}

export async function profilePhase(bench: Bench, scale: (n: number) => number): Promise<Record<string, number>> {
  for (let i = 0; i < scale(1000); i++) await bench.cycle()
  await bench.quiesce()
  const count = scale(10000)
  const areas = await profileAreas(async () => {
    for (let i = 0; i < count; i++) await bench.cycle()
  }, count)
  const out: Record<string, number> = {}
  let total = 0
  for (const [area, us] of Object.entries(areas).sort((a, b) => b[1] - a[1])) {
    if (area === 'idle') continue
    total += us
    out[`cpu_us_per_cycle_${keyOf(area)}`] = us
  }
  out.cpu_us_per_cycle_total = total
  return out
}
