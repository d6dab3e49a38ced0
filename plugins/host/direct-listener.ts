/**
 * Listeners that skip cordis's per-call reflection proxy. `ctx.on` wraps every listener in a proxy
 * that re-traces `this` and each argument on every call: ≈ 2 µs a call on this machine, against
 * ≈ 0.05 µs for a plain call. `session/event` fires several times per model request, so an
 * always-on observer pays that many times per turn. These entries live in the same listener table
 * the host's dispatch reads (see lib/dispatch.ts; cordis is pinned exactly for it) and are removed
 * by an effect of `ctx`'s fiber, exactly as `ctx.on` would remove them.
 */
import type { Context, Events } from 'cordis'
import { rawService } from '../../lib/dispatch.ts'

type Hook = { ctx: Context; callback: (...args: never[]) => unknown }

/** Like `ctx.on(name, callback)`, without the proxy. The listener must not rely on `this`. */
export function listenDirect<K extends keyof Events>(ctx: Context, name: K, callback: Events[K]): void {
  ctx.effect(() => {
    const table = (rawService(ctx.events) as unknown as { _hooks: Record<string, Hook[] | undefined> })._hooks
    const hook: Hook = { ctx, callback: callback as Hook['callback'] }
    const hooks = (table[name as string] ??= [])
    hooks.push(hook)
    return () => {
      const list = table[name as string]
      const index = list ? list.indexOf(hook) : -1
      if (index < 0) return
      list!.splice(index, 1)
      if (!list!.length) delete table[name as string]
    }
  }, `listenDirect(${String(name)})`)
}
