/**
 * Every use of cordis internals in this package, in one place. cordis is pinned exactly
 * (4.0.0-rc.10, see `peer.ts`) because of what this module relies on; it checks the
 * structural assumptions once, at load, and fails naming the supported release when one does not
 * hold. test/cordis-glue/bridge.spec.ts pins each assumption, behavioural ones included.
 *
 * What it relies on, and why:
 * - `symbols.original` (exported): the raw object behind cordis's tracing proxy, so hot paths hold
 *   a service without paying the proxy on every access.
 * - `EventsService._hooks` (public in cordis's typings, undocumented): the listener table, read by
 *   the host's dispatch (which adds one agent's own listeners after the global ones, and costs
 *   nothing when nobody listens) and written by `listenDirect`.
 * - `symbols.tracker` (exported, `Service.tracker`) and its `noShadow` flag: service methods see
 *   their caller as `this.ctx` without cordis building a shadow context on every method access.
 * - The `internal/listener` hook: a listener registered through a context derived from an agent's
 *   context goes into that agent's own table.
 * - Not the `internal/get` hook: an agent's context inherits the host's services as accessors
 *   (see `agentContextPrototype`), as does every context derived from it, so no lookup needs
 *   widening; any other service needs `inject`, with cordis's dependency tracking.
 * - `on` and `fiber` in front of cordis's on an agent's context's prototype (see
 *   `agentContextPrototype`), and `symbols.caller` answered by `callerView`.
 *
 * `internal/dispatch`: cordis tells its observers about every dispatch. The host dispatches from
 * the listener table itself, so `Dispatch` reports each dispatch it performs to those observers
 * too, with cordis's arguments `(mode, name, args, thisArg)`: `ask` is reported as `serial`,
 * `emitStrict` as `emit`; `args` holds the event's arguments without the waterfall core; `thisArg`
 * is `null`. Checking for an observer is one property read. Two differences remain, both for
 * speed: a caller's `has()` fast path skips a dispatch nobody listens to before it starts, so
 * observers hear only dispatches with at least one (global or scoped) listener; and an observer
 * that throws is reported to the dispatch's error sink instead of breaking the dispatch.
 */
import { Context, type Events, type EventsService, type Fiber, getTraceable, Service, symbols } from 'cordis'
import { type DispatchMode, type ErrorSink, type HookTable, type Listener, ListenerDispatch } from '../lib/dispatch.ts'
import { SUPPORTED_CORDIS } from '../lib/peer-dependency.ts'
// first: a different cordis release fails with the version check, not with an assumption below
import './peer.ts'
import { SubagentError } from '../lib/errors.ts'

type Hook = { ctx: Context; callback: (...args: never[]) => unknown }

/** Thrown at load when an assumption of this module does not hold for the cordis in use. */
export class CordisAssumptionError extends SubagentError {
  override readonly name = 'CordisAssumptionError'
  constructor(what: string) {
    super('PEER_DEPENDENCY', `subagent-inprocess supports cordis ${SUPPORTED_CORDIS} only: ${what}`)
  }
}

/** The raw object behind cordis's tracing proxy (the value itself when it is not proxied). */
export function rawService<T>(value: T): T {
  return ((value as { [key: symbol]: unknown })[symbols.original] ?? value) as T
}

/** The live listener table of an `EventsService` (proxied or raw): entries are `{ctx, callback}`. */
export function listenerTable(events: EventsService): HookTable {
  return rawService(events)._hooks as unknown as HookTable
}

type Tracked = { [key: symbol]: { noShadow?: boolean; associate?: string } | undefined }

/**
 * Lets callers use a service's methods without cordis building a shadow context on every method
 * access; inside a method `this.ctx` still names the calling context (SPEC §1 "scoped"). Nor does
 * a method access look for a `ctx.accessor()` named `<service>.<method>` (nobody defines one for
 * the host's services), a lookup that builds a proxy of `ctx.reflect` each time (≈ 3 KB).
 */
export function skipShadow(service: Service): void {
  const tracker = (service as unknown as Tracked)[symbols.tracker]
  if (!tracker) return
  tracker.noShadow = true
  tracker.associate = undefined
}

/**
 * Makes `ctx[name]` hand out the service object itself, as for a plain provided value: for a
 * service whose methods never need their caller (`this.ctx` is then the providing context), so no
 * access builds cordis's tracing proxy.
 */
export function untrace(service: Service): void {
  ;(service as unknown as Tracked)[symbols.tracker] = undefined
}

/**
 * Makes a config update of `ctx`'s own plugin apply in place: the fiber takes the new config and
 * `apply(config)` runs, instead of cordis's restart (unload, then apply again), between whose two
 * halves none of the plugin's listeners are there (a start landing then would meet no cap, no
 * budget). A config the fiber refuses falls back to cordis's own handling. `check(config)`, when
 * given, runs first: its throw reaches the caller of `fiber.update()` and changes nothing, not even
 * the fiber's config.
 */
export function updateInPlace<C>(ctx: Context, apply: (config: C) => void, check?: (config: C) => void): void {
  const own = ctx.fiber
  ctx.on('internal/update', function (this: Fiber, next: C, _noSave: boolean, core: () => unknown) {
    if (this !== own) return core()
    check?.(next)
    try {
      this.config = next
    } catch {
      return core()
    }
    apply(next)
    return undefined
  } as never)
}

/**
 * True while `fiber` unloads for good (disposed), false while it unloads to apply again (a config
 * update's restart): cordis clears a disposed fiber's `uid` before its effects run.
 */
export function isDisposedForGood(fiber: Fiber): boolean {
  return fiber.uid === null
}

/**
 * Like `ctx.on(name, callback, options)`, without the per-call reflection proxy cordis wraps every
 * listener in (≈ 2 µs a call against ≈ 0.05 µs for a plain call; `session/event` fires several
 * times per model request). The entry lives in the same listener table, first with `prepend` (as
 * cordis's `prepend` puts it), and is removed by an effect of `ctx`'s fiber, as `ctx.on` would
 * remove it. The listener must not rely on `this`.
 */
export function listenDirect<K extends keyof Events>(ctx: Context, name: K, callback: Events[K], options?: { prepend?: boolean }): void {
  const prepend = options?.prepend === true
  ctx.effect(() => {
    const table = listenerTable(ctx.events) as unknown as Record<string, Hook[] | undefined>
    const hook: Hook = { ctx, callback: callback as Hook['callback'] }
    const hooks = (table[name as string] ??= [])
    if (prepend) hooks.unshift(hook)
    else hooks.push(hook)
    return () => {
      const list = table[name as string]
      const index = list ? list.indexOf(hook) : -1
      if (!list || index < 0) return
      list.splice(index, 1)
      if (!list.length) delete table[name as string]
    }
  }, `listenDirect(${String(name)})`)
}

/**
 * `ListenerDispatch` over a cordis `EventsService` (proxied or raw), reporting each dispatch to
 * cordis's `internal/dispatch` observers (see the module comment for the two differences).
 */
export class Dispatch extends ListenerDispatch {
  constructor(events: EventsService, sink: ErrorSink) {
    const raw = rawService(events)
    const table = listenerTable(raw)
    super(table, sink, (mode: DispatchMode, name: string, args: readonly unknown[]) => {
      if (table['internal/dispatch']?.length) raw.emit('internal/dispatch', mode, name, args, null)
    })
  }
}

/** Answers a listener registration: a function that removes it, or `undefined` to leave it to cordis. */
export type ListenerRoute = (ctx: Context, name: string, listener: Listener, prepend: boolean) => (() => void) | undefined

/**
 * Routes `ctx.on(name, …)` made through any context below `host` (options `{global: true}`
 * excepted) through `route` first, via cordis's `internal/listener` hook; cordis registers the
 * listener itself when `route` answers `undefined`.
 */
export function routeListeners(host: Context, route: ListenerRoute): void {
  host.on('internal/listener', function (this: Context, name: string | symbol, listener: Listener, options: unknown) {
    const { prepend, global } = (options ?? {}) as { prepend?: boolean; global?: boolean }
    if (typeof name !== 'string' || global) return
    return route(this, name, listener, !!prepend)
  } as never)
}

/** What `agentContextPrototype` puts in front of cordis's own properties. */
export interface AgentContextParts {
  /** Read through the context's tracing (as `ctx[name]` would), without cordis's service lookup. */
  services: Record<string, object>
  /** True for an agent's own context (not one derived from it): it reads services as `callerView`s. */
  isAgentContext: (ctx: Context) => boolean
  /** The fiber behind `ctx` (an agent's context or one derived from it), made on first demand. */
  fiber: (ctx: Context) => Context['fiber']
  /** Tried first for `on` called on an agent's own context; `undefined` leaves it to cordis. */
  route: ListenerRoute
}

/**
 * Answers what cordis's tracing proxy answers for a host service read through `caller` (`ctx` and
 * `symbols.caller`: the caller; `symbols.original`: the service) and reads everything else from the
 * service itself. One small object per view: cordis's proxy makes three named handler closures and
 * looks its `reflect` service up through the context on every property read.
 */
class CallerViewHandler implements ProxyHandler<object> {
  constructor(readonly caller: Context) {}

  get(target: object, prop: string | symbol, receiver: unknown): unknown {
    if (prop === 'ctx' || prop === symbols.caller) return this.caller
    if (prop === symbols.original) return target
    return Reflect.get(target, prop, receiver)
  }
}

/**
 * `service` as seen from `caller`, for a host service (a `skipShadow` one, which cordis's proxy
 * would not shadow either): its methods read the caller as `this.ctx`, and `rawService` finds the
 * service. Writes go to the service itself.
 */
export function callerView<T extends object>(service: T, caller: Context): T {
  return new Proxy(service, new CallerViewHandler(caller)) as T
}

/**
 * Makes the prototype every agent context under `ownerCtx` is created from (`Object.create`), so
 * that an agent's context needs no own property but its scope: an `extend()` of `ownerCtx` with the
 * host services as accessors (the scope declares no `inject`, and cordis's lookup of a service it
 * did not inject costs a stack capture and a waterfall on every access), a lazy `fiber`, and an
 * `on` that tries `parts.route` before cordis's own. Contexts derived from an agent's context (a
 * sub-plugin's, an `extend()`) inherit all three.
 */
export function agentContextPrototype(ownerCtx: Context, parts: AgentContextParts): Context {
  const base = ownerCtx.extend() as Context
  const { isAgentContext } = parts
  for (const [name, value] of Object.entries(parts.services)) {
    const service = rawService(value)
    Object.defineProperty(base, name, {
      get(this: Context) {
        return isAgentContext(this) ? callerView(service, this) : getTraceable(this, service)
      },
    })
  }
  Object.defineProperty(base, 'fiber', {
    get(this: Context) {
      return parts.fiber(this)
    },
  })
  const inherited = Object.getPrototypeOf(base) as Context
  Object.defineProperty(base, 'on', {
    value: function on(this: Context, name: string, listener: Listener, options?: boolean | { prepend?: boolean; global?: boolean }) {
      // read in place: no options object of our own per registration
      let prepend = !!options
      let global = false
      if (typeof options === 'object') ({ prepend = false, global = false } = options)
      if (typeof name === 'string' && !global && isAgentContext(this)) {
        const removed = parts.route(this, name, listener, prepend)
        if (removed) return removed
      }
      // cordis's own `on`, resolved for the actual receiver (a sub-plugin's context inherits this)
      const cordisOn = Reflect.get(inherited, 'on', this) as Context['on']
      return Reflect.apply(cordisOn, this, [name, listener, options])
    },
  })
  return base
}

/** Checks once, at load, the structural assumptions above; throws `CordisAssumptionError`. */
export function checkCordisAssumptions(): void {
  if (typeof symbols.original !== 'symbol') throw new CordisAssumptionError('symbols.original is missing')
  if (typeof symbols.tracker !== 'symbol' || symbols.tracker !== Service.tracker) {
    throw new CordisAssumptionError('symbols.tracker is not Service.tracker')
  }
  // a bare root context: nothing outside it sees it, and it is garbage after the check
  const probe = new Context()
  const raw = (probe.events as unknown as { [key: symbol]: unknown })[symbols.original] as EventsService | undefined
  if (!raw || raw === probe.events) throw new CordisAssumptionError('ctx.events is not a proxy answering symbols.original')
  const table: unknown = raw._hooks
  if (typeof table !== 'object' || table === null) throw new CordisAssumptionError('EventsService has no _hooks table')
  const tracker = (raw as unknown as { [key: symbol]: unknown })[symbols.tracker]
  if (typeof tracker !== 'object' || tracker === null || !('noShadow' in tracker)) {
    throw new CordisAssumptionError('a service tracker has no noShadow flag')
  }
  const name = 'subagent-inprocess/probe' as keyof Events
  const remove = probe.on(name, () => {})
  const entry = (table as Record<string, { ctx?: unknown; callback?: unknown }[] | undefined>)[name as string]?.[0]
  if (entry?.ctx !== probe || typeof entry.callback !== 'function') {
    throw new CordisAssumptionError('ctx.on does not enter {ctx, callback} into EventsService._hooks')
  }
  remove()
  if ((table as Record<string, unknown>)[name as string] !== undefined) {
    throw new CordisAssumptionError('removing the last listener does not delete its EventsService._hooks entry')
  }
}

checkCordisAssumptions()
