/**
 * The host: the five services an agent needs (SPEC §1), applied as one plugin so that they can
 * hold each other directly instead of paying cordis's context proxy on every turn.
 */
// first: fail on an unsupported cordis before anything uses it
import '../../cordis-glue/peer.ts'
import type { Context } from 'cordis'
import Schema from 'schemastery'
import { localizeConfig } from '../../locales/index.ts'
import { thrownMessage } from '../../lib/errors.ts'
import { redactSecrets } from '../../lib/text/redact.ts'
import { Agents } from './agents/index.ts'
import { routeListeners, updateInPlace } from '../../cordis-glue/bridge.ts'
import { Models } from './models/index.ts'
import { HookDispatcher, routeScopedListener } from './scope.ts'
import { Sessions } from './sessions/index.ts'
import { SystemPrompt } from './system-prompt/index.ts'
import { Tools } from './tools/index.ts'

export { Agents, Models, Sessions, SystemPrompt, Tools }
export { isDisposedForGood, listenDirect, updateInPlace } from '../../cordis-glue/bridge.ts'
export { AgentSlot } from './scope.ts'
export { listenFor, listenersOf } from './agent-tables.ts'
export type { CreateOptions, PreStepDecision, StoredSession } from './agents/index.ts'
export type { AssembledPrompt } from './system-prompt/index.ts'

/** The stack of a thrown `Error` (a listener fault is a bug to locate), or its message. Never throws. */
function stackOrMessage(error: unknown): string {
  try {
    if (error instanceof Error && typeof error.stack === 'string') return error.stack
  } catch {}
  return thrownMessage(error)
}

/** Applies `sessions`, `agents`, `tools`, `systemPrompt` and `models` to the context. */
export function Host(ctx: Context, config: Host.Config): void {
  const logger = ctx.logger('host')
  const dispatcher = new HookDispatcher(ctx.events, (error, event) => {
    logger.warn(`a "${event}" listener failed: ${redactSecrets(stackOrMessage(error))}`)
  })
  const sessions = new Sessions(ctx, dispatcher)
  const tools = new Tools(ctx, dispatcher)
  const systemPrompt = new SystemPrompt(ctx, dispatcher)
  const models = new Models(ctx)
  const agents = new Agents(ctx, { sessions, tools, systemPrompt, models, dispatcher, defaultMaxSteps: config.maxSteps, meters: [] })

  // a listener registered through a context derived from an agent's, for an event about agents,
  // goes into that agent's own table, so other agents' dispatches never scan it
  routeListeners(ctx, routeScopedListener)

  // a config update applies to the next turns in place: cordis's restart would dispose every live
  // agent and run (and restart every plugin that injects a host service)
  updateInPlace<Host.Config>(ctx, (next) => agents.setDefaultMaxSteps(next.maxSteps))

  // unloading the host ends every agent still alive
  ctx.effect(() => () => agents.disposeAll(), 'host agents')
}

export namespace Host {
  export interface Config {
    maxSteps: number
  }
  // field descriptions: `config.host` in locales/*.yml
  export const Config: Schema<Config> = localizeConfig(Schema.object({ maxSteps: Schema.natural().min(1).default(32) }), 'host')
}

export default Host
