/**
 * Event dispatch over a listener table (name → `{callback}` entries, in order): cheap when nobody
 * listens, and able to add one extra listener list (an agent's own) after the table's. Plain code:
 * it reads the table it is handed and registers nothing; the host hands it cordis's
 * (cordis-glue/bridge.ts).
 */
import { HookMisuseError } from './errors.ts'
import { isThenable } from './async/thenable.ts'

export type Listener = (...args: never[]) => unknown

export type HookTable = Record<string, readonly { callback: Listener }[] | undefined>

/** Reported for observe-only listeners that throw or reject; must not throw itself. */
export type ErrorSink = (error: unknown, event: string) => void

/** How a dispatch calls its listeners, in cordis's words (`ask` is `serial`). */
export type DispatchMode = 'emit' | 'serial' | 'bail' | 'waterfall'

/** Told of every dispatch before its listeners run; a throw is reported to the sink. */
export type DispatchObserver = (mode: DispatchMode, name: string, args: readonly unknown[]) => void

export class ListenerDispatch {
  /** `hooks` is read live on every dispatch: registrations made later are seen. */
  constructor(
    private readonly hooks: HookTable,
    private readonly sink: ErrorSink,
    private readonly observer?: DispatchObserver,
  ) {}

  private observe(mode: DispatchMode, name: string, args: readonly unknown[]): void {
    if (!this.observer) return
    try {
      this.observer(mode, name, args)
    } catch (error) {
      this.onError(error, name)
    }
  }

  /** Reports through the sink; a sink that throws anyway must not break the dispatch. */
  private onError(error: unknown, name: string): void {
    try {
      this.sink(error, name)
    } catch {}
  }

  /** True when at least one listener would receive `name`. */
  has(name: string, local?: readonly Listener[]): boolean {
    return !!this.hooks[name]?.length || !!local?.length
  }

  /** A snapshot of the listeners for `name`: global ones, then `local`. */
  listeners(name: string, local?: readonly Listener[]): Listener[] | undefined {
    const global = this.hooks[name]
    if (!global?.length) return local?.length ? local.slice() : undefined
    const all = global.map((hook) => hook.callback)
    return local?.length ? all.concat(local) : all
  }

  /**
   * The one listener of `name` when there is exactly one, global or the agent's own: an always-on
   * plugin listening alone, or one scoped listener (a structured child's), is the common case, and
   * calling it needs no snapshot array.
   */
  private only(name: string, local: readonly Listener[] | undefined): Listener | undefined {
    const global = this.hooks[name]
    if (!global?.length) return local?.length === 1 ? local[0] : undefined
    return global.length === 1 && !local?.length ? global[0]!.callback : undefined
  }

  /** Observe-only: a throwing or rejecting listener is contained and reported. */
  emit(name: string, args: unknown[], local?: readonly Listener[]): void {
    this.observe('emit', name, args)
    const only = this.only(name, local)
    if (only) {
      this.emitTo(only, name, args)
      return
    }
    const listeners = this.listeners(name, local)
    if (!listeners) return
    for (let index = 0; index < listeners.length; index++) this.emitTo(listeners[index]!, name, args)
  }

  private emitTo(listener: Listener, name: string, args: unknown[]): void {
    try {
      this.contain((listener as (...a: unknown[]) => unknown)(...args), name)
    } catch (error) {
      this.onError(error, name)
    }
  }

  /** A listener's promise is not awaited: its rejection is reported, never left unhandled. */
  private contain(result: unknown, name: string): void {
    if (result && typeof (result as PromiseLike<unknown>).then === 'function') {
      Promise.resolve(result).catch((error) => this.onError(error, name))
    }
  }

  /**
   * Synchronous; a throw propagates to the caller. A listener's returned promise is not awaited:
   * its rejection is contained and reported, never left unhandled.
   */
  emitStrict(name: string, args: unknown[], local?: readonly Listener[]): void {
    this.observe('emit', name, args)
    const only = this.only(name, local)
    if (only) {
      this.contain((only as (...a: unknown[]) => unknown)(...args), name)
      return
    }
    const listeners = this.listeners(name, local)
    if (!listeners) return
    for (let index = 0; index < listeners.length; index++) this.contain((listeners[index] as (...a: unknown[]) => unknown)(...args), name)
  }

  /** Awaits each listener in turn; a throw or rejection propagates. */
  async serial(name: string, args: unknown[], local?: readonly Listener[]): Promise<void> {
    this.observe('serial', name, args)
    const listeners = this.listeners(name, local)
    if (!listeners) return
    for (const listener of listeners) await (listener as (...a: unknown[]) => unknown)(...args)
  }

  /** The first answer that is not null, undefined or false; a throw propagates. */
  bail(name: string, args: unknown[], local?: readonly Listener[]): unknown {
    this.observe('bail', name, args)
    const only = this.only(name, local)
    if (only) {
      const result = (only as (...a: unknown[]) => unknown)(...args)
      return result !== undefined && result !== null && result !== false ? result : undefined
    }
    const listeners = this.listeners(name, local)
    if (!listeners) return undefined
    for (const listener of listeners) {
      const result = (listener as (...a: unknown[]) => unknown)(...args)
      if (result !== undefined && result !== null && result !== false) return result
    }
    return undefined
  }

  /**
   * A waterfall for listeners that may answer with a promise. `next()` always returns a promise
   * and starts the inner listener a microtask later, on a fresh stack, so the stack depth stays
   * the same however many listeners there are; the innermost `next()` runs the core at once (it
   * only hands back a value, and a throw becomes the promise's rejection). A throw or rejection
   * propagates.
   */
  waterfallAsync<R>(name: string, args: unknown[], core: () => R | Promise<R>, local?: readonly Listener[]): Promise<R> {
    this.observe('waterfall', name, args)
    // one listener (a structured child's settle): a literal, not a snapshot through `map`
    const only = this.only(name, local)
    return fallAsync(only ? [only] : (this.listeners(name, local) ?? []), 0, name, args, core)
  }

  /**
   * Asks each listener in turn, awaiting its answer: the first answer that is not null or
   * undefined wins and later listeners are not asked. A listener that throws or rejects has no
   * answer either; when no listener answers, the first such error is thrown.
   */
  async ask(name: string, args: unknown[], local?: readonly Listener[]): Promise<unknown> {
    this.observe('serial', name, args)
    const listeners = this.listeners(name, local)
    if (!listeners) return undefined
    let failure: { error: unknown } | undefined
    for (const listener of listeners) {
      try {
        const answer = await (listener as (...a: unknown[]) => unknown)(...args)
        if (answer !== undefined && answer !== null) return answer
      } catch (error) {
        failure ??= { error }
      }
    }
    if (failure) throw failure.error
    return undefined
  }

  /** Each listener gets `(...args, next)`; one that does not call `next()` short-circuits `core`. */
  waterfall<R>(name: string, args: unknown[], core: () => R, local?: readonly Listener[]): R {
    this.observe('waterfall', name, args)
    const only = this.only(name, local)
    if (only) return fallOne(only, name, args, core)
    const listeners = this.listeners(name, local)
    if (!listeners) return core()
    return fall(listeners, 0, name, args, core)
  }

  /**
   * Like `serial`, without a tick for listeners that answer at once: returns `undefined` when
   * every listener returned something other than a promise (a throw then propagates
   * synchronously); from the first promise on, the rest run in turn after it and the returned
   * promise settles with them.
   */
  serialEager(name: string, args: unknown[], local?: readonly Listener[]): Promise<void> | undefined {
    this.observe('serial', name, args)
    const only = this.only(name, local)
    if (only) {
      const result = (only as (...a: unknown[]) => unknown)(...args)
      return isThenable(result) ? serialAfter(result, [], 0, args) : undefined
    }
    const listeners = this.listeners(name, local)
    if (!listeners) return undefined
    for (let index = 0; index < listeners.length; index++) {
      const result = (listeners[index] as (...a: unknown[]) => unknown)(...args)
      if (isThenable(result)) return serialAfter(result, listeners, index + 1, args)
    }
    return undefined
  }
}

// The `next` functions below are inline arrows on purpose: under tsx (esbuild `keepNames`) a
// closure bound to a name gets an `Object.defineProperty` each time it is made (≈ 1 µs here),
// and a waterfall makes one per listener on every dispatch.

/** Calls `listeners[index]` with a `next()` that goes on at `index + 1`, once. */
function fall<R>(listeners: Listener[], index: number, name: string, args: unknown[], core: () => R): R {
  const listener = listeners[index]
  if (!listener) return core()
  let called = false
  return (listener as (...a: unknown[]) => R)(...args, () => {
    if (called) throw new HookMisuseError(name, `next() called twice in a "${name}" listener`)
    called = true
    return fall(listeners, index + 1, name, args, core)
  })
}

/** `fall` over a single listener: its `next()` calls `core`, once. */
function fallOne<R>(listener: Listener, name: string, args: unknown[], core: () => R): R {
  let called = false
  return (listener as (...a: unknown[]) => R)(...args, () => {
    if (called) throw new HookMisuseError(name, `next() called twice in a "${name}" listener`)
    called = true
    return core()
  })
}

/**
 * `fall` for `waterfallAsync`: `next()` starts the inner listener a microtask later. A listener's
 * promise is passed on as it is, not wrapped in one more.
 */
function fallAsync<R>(listeners: Listener[], index: number, name: string, args: unknown[], core: () => R | Promise<R>): Promise<R> {
  try {
    return Promise.resolve(fallAsyncStep(listeners, index, name, args, core))
  } catch (error) {
    return Promise.reject(error)
  }
}

/** One listener (or the core) of `fallAsync`; its `next()` answer is a promise. */
function fallAsyncStep<R>(listeners: Listener[], index: number, name: string, args: unknown[], core: () => R | Promise<R>): R | Promise<R> {
  const listener = listeners[index]
  if (!listener) return core()
  let called = false
  return (listener as (...a: unknown[]) => R | Promise<R>)(...args, () => {
    if (called) throw new HookMisuseError(name, `next() called twice in a "${name}" listener`)
    called = true
    const inner = index + 1
    // the core is no listener (it only hands back the value the waterfall started from), so it
    // may run now: one promise for its answer instead of a hop and a reaction
    if (inner === listeners.length) return fallAsync(listeners, inner, name, args, core)
    // a plain value from the inner step resolves this promise without one more adoption
    return Promise.resolve(inner).then((at) => fallAsyncStep(listeners, at, name, args, core))
  })
}

async function serialAfter(pending: PromiseLike<unknown>, listeners: Listener[], index: number, args: unknown[]): Promise<void> {
  await pending
  for (let at = index; at < listeners.length; at++) await (listeners[at] as (...a: unknown[]) => unknown)(...args)
}

