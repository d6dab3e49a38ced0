/**
 * The turn's signal as an own property of the objects the loop hands out per call (a model
 * request, a tool execution), read from the turn only when someone reads it.
 */

/** Where a call of the agent loop finds its signal (the turn's state), read on demand. */
export interface SignalSource {
  readonly signal: AbortSignal
}

/**
 * A per-call object whose `signal` is an own, enumerable accessor reading its source's signal, so
 * a spread still copies a signal and a reader that never looks costs no `AbortController`. One
 * accessor shared by every such object keeps them in V8's fast mode: a getter written in an object
 * literal makes a dictionary-mode object with its own getter closure on every call (≈ 0.6 KB).
 * A subclass assigns its own keys, then calls `defineSignal()` last, so `signal` is its last key.
 */
export abstract class TurnSignalCarrier {
  static readonly #signal: PropertyDescriptor = {
    get(this: TurnSignalCarrier): AbortSignal {
      return this.#source.signal
    },
    enumerable: true,
  }

  declare readonly signal: AbortSignal
  readonly #source: SignalSource

  constructor(source: SignalSource) {
    this.#source = source
  }

  /** Adds `signal` after the keys assigned so far. */
  protected defineSignal(): void {
    Object.defineProperty(this, 'signal', TurnSignalCarrier.#signal)
  }
}
