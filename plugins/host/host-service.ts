/**
 * The shape the host's hook-dispatching services share (`Tools`, `SystemPrompt`, `Sessions`).
 */
import { type Context, Service } from 'cordis'
import { skipShadow } from '../../cordis-glue/bridge.ts'
import type { HookDispatcher } from './scope.ts'

/**
 * A host service registered as `ctx[name]`, read without cordis's per-access shadow context
 * (`skipShadow`), and dispatching its hooks through the host's one dispatcher.
 */
export abstract class HostService extends Service {
  // cordis calls service methods through a tracing proxy, where #private fields cannot be read
  protected readonly dispatcher: HookDispatcher

  constructor(ctx: Context, name: string, dispatcher: HookDispatcher) {
    super(ctx, name)
    skipShadow(this)
    this.dispatcher = dispatcher
  }
}
