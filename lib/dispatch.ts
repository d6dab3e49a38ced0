/**
 * Event dispatch over a listener table (name → `{callback}` entries, in order): cheap when nobody
 * listens, and able to add one extra listener list (an agent's own) after the table's. Plain code:
 * it reads the table it is handed and registers nothing; the host hands it cordis's
 * (plugins/host/cordis-bridge.ts).
 */

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

  /** Observe-only: a throwing or rejecting listener is contained and reported. */
  emit(name: string, args: unknown[], local?: readonly Listener[]): void {
    this.observe('emit', name, args)
    const listeners = this.listeners(name, local)
    if (!listeners) return
    for (const listener of listeners) {
      try {
        const result = (listener as (...a: unknown[]) => unknown)(...args)
        if (result && typeof (result as PromiseLike<unknown>).then === 'function') {
          Promise.resolve(result).catch((error) => this.onError(error, name))
        }
      } catch (error) {
        this.onError(error, name)
      }
    }
  }

  /**
   * Synchronous; a throw propagates to the caller. A listener's returned promise is not awaited:
   * its rejection is contained and reported, never left unhandled.
   */
  emitStrict(name: string, args: unknown[], local?: readonly Listener[]): void {
    this.observe('emit', name, args)
    const listeners = this.listeners(name, local)
    if (!listeners) return
    for (const listener of listeners) {
      const result = (listener as (...a: unknown[]) => unknown)(...args)
      if (result && typeof (result as PromiseLike<unknown>).then === 'function') {
        Promise.resolve(result).catch((error) => this.onError(error, name))
      }
    }
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
   * the same however many listeners there are. A throw or rejection propagates.
   */
  async waterfallAsync<R>(name: string, args: unknown[], core: () => R | Promise<R>, local?: readonly Listener[]): Promise<R> {
    this.observe('waterfall', name, args)
    const listeners = this.listeners(name, local)
    if (!listeners) return core()
    const step = async (index: number): Promise<R> => {
      const listener = listeners[index]
      if (!listener) return core()
      let called = false
      const next = (): Promise<R> => {
        if (called) throw new Error(`next() called twice in a "${name}" listener`)
        called = true
        return Promise.resolve(index + 1).then(step)
      }
      return (listener as (...a: unknown[]) => R | Promise<R>)(...args, next)
    }
    return step(0)
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
    const listeners = this.listeners(name, local)
    if (!listeners) return core()
    let index = 0
    const dispatch = (): R => {
      const listener = listeners[index++]
      if (!listener) return core()
      let called = false
      const next = () => {
        if (called) throw new Error(`next() called twice in a "${name}" listener`)
        called = true
        return dispatch()
      }
      return (listener as (...a: unknown[]) => R)(...args, next)
    }
    return dispatch()
  }
}
