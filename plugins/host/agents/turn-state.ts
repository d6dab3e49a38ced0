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
  // `declare`d fields, assigned in the constructor: see docs/performance.md, "Declared fields"
  declare readonly turn: number
  /** Set by `cancel`, before anything hears of the abort. */
  declare cause?: CancelCause
  #aborted = false
  #reason: unknown
  #controller?: AbortController
  /** The last `read()`, ended with the cancellation reason by `cancel`. */
  #read?: RacedRead

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
   * Cancels the turn once: records `cause`, aborts the signal (if anyone made it) and ends the
   * pending `read` with the reason. Later calls do nothing.
   */
  cancel(cause: CancelCause): void {
    if (this.#aborted) return
    this.cause = cause
    this.#aborted = true
    const reason = new TurnCancelledError(cause)
    this.#reason = reason
    this.#controller?.abort(reason)
    this.#read?.interrupt(reason)
  }

  /**
   * Reads `iterator` to its end, handing each result `next()` settles with to `reader.take` as it
   * arrives, one `next()` pending at a time. Resolves once `take` returns true; rejects with a throw
   * of `next()` or of `take`, with a rejection of `next()`'s promise, or with the cancellation
   * reason as soon as the turn is cancelled: a model adapter that ignores its signal cannot hold a
   * cancelled turn (or a disposal) open, and a result that arrives after the cancellation is not
   * handed on. One read at a time: the loop awaits each before starting the next.
   */
  read(iterator: AsyncIterator<unknown>, reader: ResultReader): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const read = new RacedRead(this, iterator, reader, resolve, reject)
      this.#read = read
      read.pull()
    })
  }
}

/** What `TurnState.read` hands an iterator's results to. */
export interface ResultReader {
  /**
   * Takes one result of the iterator's `next()`, whatever value it settled with (a well-behaved
   * iterator's is an `IteratorResult`); returns true once the read is over. A throw ends the read
   * with that error.
   */
  take(result: unknown): boolean
}

function ignore(): void {}

/**
 * One `TurnState.read`. Each result is taken in the reaction to its own `next()` promise, so a
 * long stream costs one reaction per result and nothing that outlives it: no promise made per
 * result to race it, nothing added to a promise that lives as long as the turn.
 */
class RacedRead {
  // all dropped once the read is over (`reader` unset is what "over" means): a finished read
  // must hold nothing of its turn. Reactions V8 ran for it may stay referenced from old-space
  // garbage until the next full collection, and anything a finished read still held (its turn,
  // its agent, the session) would then survive every scavenge in between: measured, a plain
  // spawn cycle promoted ≈ 700 KB per scavenge instead of ≈ 20 KB
  private declare iterator: AsyncIterator<unknown> | undefined
  private declare reader: ResultReader | undefined
  private declare state: TurnState | undefined
  private declare resolve: (() => void) | undefined
  private declare reject: ((reason: unknown) => void) | undefined
  // the `then` handlers: its own `take` and `interrupt`, bound. Not arrow functions made in the
  // constructor (the plain spawn cycle's old space grew ≈ 100 B more per cycle, `bench/cycle-gc.ts`,
  // Node 22: 262 -> 350-380 B), nor bound module functions: tsx (esbuild's keepNames) renames those
  // with `Object.defineProperty`, and binding a renamed function is the slow path of `bind` (a
  // three-part read cost ≈ 0.9 µs instead of ≈ 0.25 µs, the plain cycle's p50 ≈ +10 %)
  private declare readonly onResult: (result: unknown) => void
  private declare readonly onError: (error: unknown) => void

  constructor(state: TurnState, iterator: AsyncIterator<unknown>, reader: ResultReader, resolve: () => void, reject: (reason: unknown) => void) {
    this.iterator = iterator
    this.reader = reader
    this.state = state
    this.resolve = resolve
    this.reject = reject
    this.onResult = this.take.bind(this)
    this.onError = this.interrupt.bind(this)
  }

  /** Asks for the next result, unless the read is over. */
  pull(): void {
    const { iterator, state } = this
    if (!iterator || !state) return
    let pending: Promise<unknown>
    try {
      // whatever `next()` hands back (a promise, a thenable, a bare value) is settled as
      // `Promise.race` would; a native promise is taken as it is, without a wrapper
      pending = Promise.resolve(iterator.next())
    } catch (error) {
      this.interrupt(error)
      return
    }
    if (state.aborted) {
      pending.catch(ignore)
      this.interrupt(state.reason)
      return
    }
    pending.then(this.onResult, this.onError)
  }

  /** Ends the read with `reason`, unless it is over already. */
  interrupt(reason: unknown): void {
    const reject = this.reject
    if (this.over()) return
    reject?.(reason)
  }

  /** Hands `result` to the reader and asks for the next one, or ends the read. */
  take(result: unknown): void {
    const reader = this.reader
    // ended meanwhile (a cancellation): the result is not part of the read
    if (!reader) return
    let done: boolean
    try {
      done = reader.take(result)
    } catch (error) {
      this.interrupt(error)
      return
    }
    if (!done) {
      this.pull()
      return
    }
    const resolve = this.resolve
    // ended while the reader took the last result (a cancellation): rejected already
    if (this.over()) return
    resolve?.()
  }

  /** Marks the read over and drops everything it held; true when it was over already. */
  private over(): boolean {
    if (!this.reader) return true
    this.iterator = undefined
    this.reader = undefined
    this.state = undefined
    this.resolve = undefined
    this.reject = undefined
    return false
  }
}
