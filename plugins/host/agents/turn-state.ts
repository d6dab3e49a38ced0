/**
 * One turn's cancellation state. The turn's `AbortSignal` is made only when something reads it (a
 * model adapter or a tool): most scripted and fast turns never do, and a signal is the costliest
 * object of a turn to build. Cancelling before anyone read it still hands later readers an
 * aborted signal with the same reason.
 */
import { SubagentError } from '../../../lib/errors.ts'
import type { CancelCause } from '../../../lib/types.ts'

/** The cancellation reason a turn's signal aborts with. */
export class TurnCancelledError extends SubagentError {
  override readonly name = 'TurnCancelledError'
  constructor(readonly cancelCause: CancelCause) {
    super('ABORTED', `turn cancelled (${cancelCause.kind})`)
  }
}

export class TurnState {
  // the public fields are `declare`d and assigned in the constructor: as a parameter property or an
  // initialized field each would be defined twice per turn (see HostAgent)
  declare readonly turn: number
  /** Set by `cancel`, before anything hears of the abort. */
  declare cause?: CancelCause
  #aborted = false
  #reason: unknown
  #controller?: AbortController
  /** Rejects the race `race()` has pending, if any. */
  #rejectRace?: (reason: unknown) => void

  constructor(turn: number) {
    this.turn = turn
    this.cause = undefined
  }

  /** True once the turn was cancelled. */
  get aborted(): boolean {
    return this.#aborted
  }

  /** The `TurnCancelledError` the turn was cancelled with; `undefined` before that. */
  get reason(): unknown {
    return this.#reason
  }

  /** The turn's signal, made on first read; already aborted when the turn was cancelled before. */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController()
      if (this.#aborted) this.#controller.abort(this.#reason)
    }
    return this.#controller.signal
  }

  /**
   * Cancels the turn once: records `cause`, aborts the signal (if anyone made it) and rejects the
   * pending `race`. Later calls do nothing.
   */
  cancel(cause: CancelCause): void {
    if (this.#aborted) return
    this.cause = cause
    this.#aborted = true
    const reason = new TurnCancelledError(cause)
    this.#reason = reason
    this.#controller?.abort(reason)
    const reject = this.#rejectRace
    this.#rejectRace = undefined
    reject?.(reason)
  }

  /**
   * `promise`, or the cancellation reason as soon as the turn is cancelled: a model adapter that
   * ignores its signal cannot hold a cancelled turn (or a disposal) open. One race at a time: the
   * loop awaits each before starting the next.
   */
  race<T>(value: T | PromiseLike<T>): Promise<T> {
    // whatever an adapter's iterator hands back (a promise, a thenable, a bare value) is settled
    // as `Promise.race` would; a native promise is taken as it is, without a wrapper
    const promise = Promise.resolve(value)
    if (this.#aborted) {
      promise.catch(() => {})
      return Promise.reject(this.#reason)
    }
    return new Promise<T>((resolve, reject) => {
      this.#rejectRace = reject
      promise.then(resolve, reject)
    })
  }
}
