import { type Context, Service } from 'cordis'
import type { Agent, ModelAdapter } from '../../../lib/types.ts'
import { installScoped, skipShadow } from '../scope.ts'
import { agentScope } from '../tools/index.ts'

declare module 'cordis' {
  interface Context {
    models: Models
  }
}

/** Model adapters by provider name (SPEC §1.7). A scoped adapter shadows a global one. */
export class Models extends Service {
  // cordis calls service methods through a tracing proxy, where #private fields cannot be read
  private readonly globals = new Map<string, ModelAdapter[]>()

  constructor(ctx: Context) {
    super(ctx, 'models')
    skipShadow(this)
  }

  /** Routes `provider` to `adapter` for the calling context's lifetime; the newest route wins. */
  register(provider: string, adapter: ModelAdapter): () => void {
    if (typeof provider !== 'string' || !provider) throw new TypeError('model provider must be a non-empty string')
    if (typeof adapter?.stream !== 'function') throw new TypeError(`model adapter for "${provider}" must have a stream() method`)
    return installScoped(this.ctx, `ctx.models.register(${provider})`, (scope) => {
      if (scope) {
        const table = (scope.models ??= new Map())
        const previous = table.get(provider)
        table.set(provider, adapter)
        return () => {
          if (table.get(provider) !== adapter) return
          if (previous) table.set(provider, previous)
          else table.delete(provider)
        }
      }
      let stack = this.globals.get(provider)
      if (!stack) this.globals.set(provider, (stack = []))
      stack.push(adapter)
      return () => {
        const index = stack.lastIndexOf(adapter)
        if (index >= 0) stack.splice(index, 1)
        if (!stack.length && this.globals.get(provider) === stack) this.globals.delete(provider)
      }
    })
  }

  /** The adapter the agent would use for `provider`, or `undefined`. */
  resolve(provider: string, agent?: Agent): ModelAdapter | undefined {
    const scoped = agentScope(agent)?.models?.get(provider)
    if (scoped) return scoped
    const stack = this.globals.get(provider)
    return stack?.[stack.length - 1]
  }
}
