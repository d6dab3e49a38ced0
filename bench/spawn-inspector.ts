/**
 * The inspector variant's latency phase of `bench/spawn.ts`.
 */
import { fullGc } from './heap.ts'
import { type Bench, keepChildren, percentile, setupHost } from './spawn-host.ts'

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
export async function inspectorLatency(bench: Bench, scale: (n: number) => number): Promise<Record<string, number>> {
  const tree = await setupHost('plain', { budget: null, observer: false })
  const empty = await setupHost('plain', { budget: null, observer: false })
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
