/**
 * Abort subscriptions that share one listener per signal. A caller may hand one `AbortSignal` to
 * any number of concurrent starts; a listener each would trip Node's `MaxListenersExceededWarning`
 * at 11 (a false alarm, since each is removed on settle). Plain code: no cordis, no I/O.
 */

/** One subscription; its own object, so one callback subscribed twice is removed once at a time. */
interface Subscription {
  readonly callback: () => void
}

/**
 * A signal's one listener (an `EventListener` object: no closure per signal) and its subscribers.
 * A single subscriber, the usual case, needs no set.
 */
class Fanout {
  #only?: Subscription
  #more?: Set<Subscription>

  constructor(private readonly signal: AbortSignal) {}

  add(subscription: Subscription): void {
    if (!this.#only && !this.#more?.size) {
      this.#only = subscription
      return
    }
    const more = (this.#more ??= new Set())
    if (this.#only) {
      // keep subscription order: the single subscriber moves into the set first
      more.add(this.#only)
      this.#only = undefined
    }
    more.add(subscription)
  }

  /** Removes one subscription; true when it was there and was the last one. */
  remove(subscription: Subscription): boolean {
    if (this.#only === subscription) this.#only = undefined
    else if (!this.#more?.delete(subscription)) return false
    return !this.#only && !this.#more?.size
  }

  handleEvent(): void {
    fanouts.delete(this.signal)
    const subscriptions = this.#only ? [this.#only] : [...(this.#more ?? [])]
    this.#only = undefined
    this.#more = undefined
    let failure: { error: unknown } | undefined
    for (const { callback } of subscriptions) {
      try {
        callback()
      } catch (error) {
        failure ??= { error }
      }
    }
    if (failure) throw failure.error
  }
}

const fanouts = new WeakMap<AbortSignal, Fanout>()

/**
 * Calls `callback` once, when `signal` aborts (never when it already has: check `aborted` first).
 * Returns a remover; the signal's one shared listener goes when its last subscriber does. Callbacks
 * run in subscription order; if one throws, the rest still run and the first error is rethrown from
 * the listener (where Node reports it as it would any listener's).
 */
export function subscribeAbort(signal: AbortSignal, callback: () => void): () => void {
  let fanout = fanouts.get(signal)
  if (!fanout) {
    fanout = new Fanout(signal)
    fanouts.set(signal, fanout)
    signal.addEventListener('abort', fanout, { once: true })
  }
  const subscription: Subscription = { callback }
  const current = fanout
  current.add(subscription)
  return () => {
    if (!current.remove(subscription) || fanouts.get(signal) !== current) return
    fanouts.delete(signal)
    signal.removeEventListener('abort', current)
  }
}
