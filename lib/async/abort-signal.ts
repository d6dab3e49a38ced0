/**
 * Abort subscriptions that share one listener per signal. A caller may hand one `AbortSignal` to
 * any number of concurrent starts; a listener each would trip Node's `MaxListenersExceededWarning`
 * at 11 (a false alarm, since each is removed on settle). Plain code: no cordis, no I/O.
 *
 * The listener is one module-level function for every signal: it finds the signal's subscribers
 * by the event's target. A signal with one subscriber, the usual case, keeps that subscription as
 * its entry; a second one turns the entry into a set. So a subscription costs the subscriber's own
 * object (or, through `subscribeAbort`, a record and its remover), and nothing per signal besides
 * the map entry (no fanout object, no listener closure). Measured in bench/spawn.ts (Node 22, `--trace-gc-nvp`) when the listener was first
 * made a function: the shape of what the signal holds decides how much survives each scavenge of
 * the timed loop (an `EventListener` object, or a function with the signal in a field, left
 * ≈ 300 KB, and the cycles that first touched the grown young generation ran 5-8× slower, hundreds
 * in a row). This shape, measured with bench/cycle-gc.ts: no more scavenges or
 * old-space growth per cycle than a fanout object per signal (16-17 per 10,000 cycles; 260
 * against 311 B a cycle). Re-measure the latency window's p95 before changing it.
 */

/**
 * One subscription: `onAbort` runs once, when its signal aborts. An object the subscriber owns (a
 * run's link to its child, say) can be the subscription itself, so holding one costs no closure,
 * nor a remover: the same object unsubscribes it. Subscribed to one signal at most once at a time.
 */
export interface AbortSubscription {
  onAbort(): void
}

/** A signal's subscribers: the only one, or (from the second on) all of them in subscription order. */
type Subscribers = AbortSubscription | Set<AbortSubscription>

const subscribers = new WeakMap<AbortSignal, Subscribers>()

/**
 * The listener of every subscribed signal. Calls each subscriber once, in subscription order; if
 * one throws, the rest still run and the first error is rethrown (where Node reports it as it
 * would any listener's).
 */
function onAbort(event: Event): void {
  const signal = event.target as AbortSignal
  const entry = subscribers.get(signal)
  subscribers.delete(signal)
  // added without `once` (see subscribe), so it goes here: an aborted signal keeps nothing
  signal.removeEventListener('abort', onAbort)
  if (entry === undefined) return
  if (!(entry instanceof Set)) {
    entry.onAbort()
    return
  }
  let failure: { error: unknown } | undefined
  // the set is no longer the signal's entry: a subscription or removal made meanwhile goes elsewhere
  for (const subscription of entry) {
    try {
      subscription.onAbort()
    } catch (error) {
      failure ??= { error }
    }
  }
  if (failure) throw failure.error
}

/**
 * Subscribes `subscription` to `signal`: its `onAbort` runs once, when the signal aborts (never
 * when it already has: check `aborted` first). Subscriptions run in subscription order; if one
 * throws, the rest still run and the first error is rethrown from the listener (where Node reports
 * it as it would any listener's). Remove it with `unsubscribe`.
 */
export function subscribe(signal: AbortSignal, subscription: AbortSubscription): void {
  const entry = subscribers.get(signal)
  if (entry === undefined) {
    subscribers.set(signal, subscription)
    // no options object: Node validates one and copies it into a record on every add, and `once`
    // is what `onAbort` does itself (an abort signal fires once)
    signal.addEventListener('abort', onAbort)
  } else if (entry instanceof Set) entry.add(subscription)
  else subscribers.set(signal, new Set([entry, subscription]))
}

/** Removes `subscription` from `signal` (nothing when it is not subscribed); the signal's listener goes with its last one. */
export function unsubscribe(signal: AbortSignal, subscription: AbortSubscription): void {
  const entry = subscribers.get(signal)
  if (entry === subscription) {
    subscribers.delete(signal)
    signal.removeEventListener('abort', onAbort)
  } else if (entry instanceof Set && entry.delete(subscription) && entry.size === 0) {
    subscribers.delete(signal)
    signal.removeEventListener('abort', onAbort)
  }
}

/**
 * Calls `callback` once, when `signal` aborts (as `subscribe`, for a subscriber that is a bare
 * function). Returns a remover; calling it again does nothing.
 */
export function subscribeAbort(signal: AbortSignal, callback: () => void): () => void {
  // its own object: one callback subscribed twice is removed once at a time
  const subscription: AbortSubscription = { onAbort: callback }
  subscribe(signal, subscription)
  return () => unsubscribe(signal, subscription)
}
