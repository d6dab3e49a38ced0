/**
 * Bounds how many file operations run at once, so thousands of sessions writing together never
 * hold more than `limit` descriptors, and retries an operation that found the process out of
 * descriptors (`EMFILE`, `ENFILE`: other code may hold them) after a growing pause.
 */

/** Pauses between attempts of an operation that failed for want of a descriptor. */
export interface RetryPolicy {
  firstDelayMs: number
  maxDelayMs: number
  /** Total pause after which the operation fails with its last error. */
  giveUpAfterMs: number
}

export const defaultRetryPolicy: RetryPolicy = Object.freeze({ firstDelayMs: 2, maxDelayMs: 250, giveUpAfterMs: 60_000 })

/** True for the errors that mean "no descriptor was free": nothing was opened, so a retry is safe. */
export function isOutOfDescriptors(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  return code === 'EMFILE' || code === 'ENFILE'
}

export class OpenFileGate {
  #active = 0
  /** Callers waiting for a slot, first in first out (`#head` is the next one). */
  #queue: (() => void)[] = []
  #head = 0

  /** Throws `RangeError` unless `limit` is a positive safe integer. */
  constructor(readonly limit: number, private readonly retry: RetryPolicy = defaultRetryPolicy) {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError('open file limit must be a positive safe integer')
  }

  /** Operations running now; never more than `limit`. */
  get active(): number {
    return this.#active
  }

  /**
   * Runs `task` once a slot is free (callers are served in order) and settles with its outcome. A
   * task that fails with `EMFILE`/`ENFILE` gives its slot back and runs again after a pause
   * (doubling from `firstDelayMs` up to `maxDelayMs`) until it succeeds, fails otherwise, or the
   * pauses reach `giveUpAfterMs`. `task` must open at most one descriptor at a time.
   */
  async run<T>(task: () => Promise<T>): Promise<T> {
    let delay = this.retry.firstDelayMs
    let paused = 0
    for (;;) {
      if (this.#active < this.limit) this.#active++
      else await new Promise<void>((resolve) => this.#queue.push(resolve))
      try {
        return await task()
      } catch (error) {
        if (!isOutOfDescriptors(error) || paused >= this.retry.giveUpAfterMs) throw error
      } finally {
        this.#release()
      }
      await new Promise((resolve) => setTimeout(resolve, delay))
      // counted as at least 1 ms, so a zero first delay still reaches giveUpAfterMs
      paused += Math.max(delay, 1)
      delay = Math.min(Math.max(delay * 2, 1), this.retry.maxDelayMs)
    }
  }

  /** Hands the slot to the next caller in line, or frees it. */
  #release(): void {
    if (this.#head === this.#queue.length) {
      this.#active--
      return
    }
    const next = this.#queue[this.#head++]!
    if (this.#head === this.#queue.length) {
      this.#queue = []
      this.#head = 0
    } else if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      // under steady load the line may never empty: drop the served part now and then
      this.#queue = this.#queue.slice(this.#head)
      this.#head = 0
    }
    next()
  }
}
