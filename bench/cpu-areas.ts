/**
 * A CPU profile of a stretch of code, taken in-process through `node:inspector` so it covers only
 * that stretch (not module loading or warm-up), summed by area: the plugin folder, `lib`,
 * `cordis-glue`, an npm package, Node's own code, the garbage collector.
 */
import { Session } from 'node:inspector/promises'

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string }
}
interface Profile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
}

/** The area a frame's code belongs to. */
export function areaOf(frame: ProfileNode['callFrame']): string {
  const { url, functionName } = frame
  if (!url) {
    if (functionName === '(garbage collector)') return 'gc'
    // `(program)` is V8's own work outside JavaScript, `(idle)` the event loop waiting
    return /^\((program|idle)\)$/.exec(functionName)?.[1] ?? 'native'
  }
  const plugin = /\/plugins\/([^/]+)\//.exec(url)
  if (plugin && !url.includes('/node_modules/')) return plugin[1]!
  const pkg = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url.slice(url.lastIndexOf('/node_modules/')))
  if (pkg) return pkg[1]!
  if (url.startsWith('node:')) return 'node'
  if (url.includes('/lib/')) return 'lib'
  if (url.includes('/cordis-glue/')) return 'cordis-glue'
  if (url.includes('/bench/')) return 'bench'
  return 'other'
}

/**
 * Runs `work` under the sampling profiler (interval `intervalUs`) and returns the self time per
 * area in µs, divided by `per` (e.g. the cycles `work` ran).
 */
export async function profileAreas(work: () => Promise<void>, per: number, intervalUs = 50): Promise<Record<string, number>> {
  const session = new Session()
  session.connect()
  await session.post('Profiler.enable')
  await session.post('Profiler.setSamplingInterval', { interval: intervalUs })
  await session.post('Profiler.start')
  const stop = async () => {
    const { profile } = (await session.post('Profiler.stop')) as { profile: Profile }
    session.disconnect()
    return profile
  }
  try {
    await work()
  } catch (error) {
    await stop()
    throw error
  }
  const profile = await stop()
  const areaOfNode = new Map<number, string>()
  for (const node of profile.nodes) areaOfNode.set(node.id, areaOf(node.callFrame))
  const totals: Record<string, number> = {}
  for (let i = 0; i < profile.samples.length; i++) {
    const area = areaOfNode.get(profile.samples[i]!) ?? 'other'
    totals[area] = (totals[area] ?? 0) + (profile.timeDeltas[i] ?? 0)
  }
  return Object.fromEntries(Object.entries(totals).map(([area, us]) => [area, us / per]))
}
