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
 * A signal's one listener and its subscribers. A single subscriber, the usual case, needs no set.
 *
 * The listener is a function that reads its signal from the event; the fanout keeps no field for
 * it. Measured in bench/spawn.ts (Node 22, `--trace-gc-nvp`): the two earlier forms, this object
 * as an `EventListener` and a function listener with the signal in a field, both left ≈ 300 KB
 * surviving each scavenge of the timed loop (this form: 15-100 KB), so the young generation grew
 * inside it and the cycles that first touched its fresh pages ran 5-8× slower, hundreds in a row:
 * the benchmark's p95 was ≈ 7× its p50 with either form and is 2-3× with this one. Which V8
 * heuristic reacts to the difference is not known; re-measure before changing this class's shape.
 */
class Fanout {
  #only?: Subscription
  #more?: Set<Subscription>
  /** What is added to the signal (Node calls a function as is; an `EventListener` object it wraps). */
  readonly listener: (event: Event) => void

  constructor() {
    // assigned here, not as a class field: tsx names a field's arrow with a defineProperty per fanout
    this.listener = (event) => this.fire(event.target as AbortSignal)
  }

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

  private fire(signal: AbortSignal): void {
    fanouts.delete(signal)
    // added without `once` (see subscribeAbort), so it goes here: an aborted signal keeps nothing
    signal.removeEventListener('abort', this.listener)
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
    fanout = new Fanout()
    fanouts.set(signal, fanout)
    // no options object: Node validates one and copies it into a record on every add, and `once`
    // is what `fire` does itself (an abort signal fires once)
    signal.addEventListener('abort', fanout.listener)
  }
  const subscription: Subscription = { callback }
  const current = fanout
  current.add(subscription)
  return () => {
    if (!current.remove(subscription) || fanouts.get(signal) !== current) return
    fanouts.delete(signal)
    signal.removeEventListener('abort', current.listener)
  }
}
