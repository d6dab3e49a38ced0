/**
 * The scene the turn benchmarks run in: a cordis root with the host and a scripted model.
 */
import { Context } from 'cordis'
import { Host } from '../plugins/host/index.ts'
import { ScriptedModel } from '../plugins/scripted-model/index.ts'

/** A root with `Host` (`maxSteps: 32`) and a non-recording `ScriptedModel` under provider `scripted`. */
export async function scriptedHost(): Promise<Context> {
  const root = new Context()
  await root.plugin(Host, { maxSteps: 32 })
  await root.plugin(ScriptedModel, { provider: 'scripted', record: false })
  return root
}
