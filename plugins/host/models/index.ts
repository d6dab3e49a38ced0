import { type Context, Service } from 'cordis'
import type { Agent, ModelAdapter } from '../../../lib/types.ts'
import { skipShadow } from '../../../cordis-glue/bridge.ts'
import { installScoped, NameTable, scopeOf } from '../scope.ts'

declare module 'cordis' {
  interface Context {
    models: Models
  }
}

/** Model adapters by provider name (SPEC §1.7). A scoped adapter shadows a global one. */
export class Models extends Service {
  // cordis calls service methods through a tracing proxy, where #private fields cannot be read
  private readonly globals = new NameTable<ModelAdapter>()

  constructor(ctx: Context) {
    super(ctx, 'models')
    skipShadow(this)
  }

  /** Routes `provider` to `adapter` for the calling context's lifetime; the newest route wins. */
  register(provider: string, adapter: ModelAdapter): () => void {
    if (typeof provider !== 'string' || !provider) throw new TypeError('model provider must be a non-empty string')
    if (typeof adapter?.stream !== 'function') throw new TypeError(`model adapter for "${provider}" must have a stream() method`)
    return installScoped(this.ctx, `ctx.models.register(${provider})`, (scope) => {
      const table = scope ? (scope.models ??= new NameTable()) : this.globals
      return table.add(provider, adapter)
    })
  }

  /** The adapter the agent would use for `provider`, or `undefined`. */
  resolve(provider: string, agent?: Agent): ModelAdapter | undefined {
    return scopeOf(agent)?.models?.get(provider) ?? this.globals.get(provider)
  }
}
