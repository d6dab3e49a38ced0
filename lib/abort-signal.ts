/**
 * Abort subscriptions that share one listener per signal. A caller may hand one `AbortSignal` to
 * any number of concurrent starts; a listener each would trip Node's `MaxListenersExceededWarning`
 * at 11 (a false alarm, since each is removed on settle). Plain code: no cordis, no I/O.
 */

interface Fanout {
  readonly callbacks: Set<() => void>
  readonly listener: () => void
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
    const callbacks = new Set<() => void>()
    const listener = () => {
      fanouts.delete(signal)
      let failure: { error: unknown } | undefined
      for (const fn of [...callbacks]) {
        try {
          fn()
        } catch (error) {
          failure ??= { error }
        }
      }
      callbacks.clear()
      if (failure) throw failure.error
    }
    fanout = { callbacks, listener }
    fanouts.set(signal, fanout)
    signal.addEventListener('abort', listener, { once: true })
  }
  // a wrapper per subscription, so one callback subscribed twice is removed once at a time
  const entry = () => callback()
  const current = fanout
  const { callbacks, listener } = current
  callbacks.add(entry)
  return () => {
    if (!callbacks.delete(entry) || callbacks.size > 0 || fanouts.get(signal) !== current) return
    fanouts.delete(signal)
    signal.removeEventListener('abort', listener)
  }
}
