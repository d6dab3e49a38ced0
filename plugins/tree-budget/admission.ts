/**
 * The concurrency queue (SPEC §9): at most `maxConcurrent` unsettled runs per parent; further
 * starts wait first in first out. O(1) per start: a map lookup and a counter, plus a linked-line
 * push or shift for a start that waits.
 */
import { type AbortSubscription, subscribe, unsubscribe } from '../../lib/async/abort-signal.ts'
import { type Place, WaitingLine } from '../../lib/async/waiting-line.ts'

interface Waiter {
  resolve(): void
  reject(error: unknown): void
}

/**
 * One parent's slots: the count of held ones and the line of starts waiting for one. A lane stays
 * while its parent lives (dropped at `close`), so a start with a free slot allocates nothing here.
 */
export interface Lane {
  live: number
  /** Made when the first start has to wait. */
  line?: WaitingLine<Waiter>
}

export class Admission {
  readonly #lanes = new Map<string, Lane>()

  /**
   * @param limit `maxConcurrent`, read each time a slot is asked for or freed
   * @param abortError what a start aborted while waiting rejects with
   */
  constructor(
    private readonly limit: () => number,
    private readonly abortError: (signal: AbortSignal) => unknown,
  ) {}

  /**
   * `parentId`'s lane, made on first use; the same object until `close(parentId)`, so a caller may
   * keep it (the budget keeps it on the parent's node) instead of looking it up per start.
   */
  lane(parentId: string): Lane {
    let lane = this.#lanes.get(parentId)
    if (!lane) this.#lanes.set(parentId, (lane = { live: 0 }))
    return lane
  }

  /**
   * Takes a slot of `lane` at once when one is free and nobody waits (true); otherwise false, and
   * the start waits with `wait`.
   */
  tryAcquire(lane: Lane): boolean {
    if (lane.line?.size || lane.live >= this.limit()) return false
    lane.live++
    return true
  }

  /**
   * Waits in `lane`'s line for a slot, in line order. An abort while waiting, or before (a signal
   * already aborted never joins the line), rejects with `abortError(signal)` and leaves the line. Give the slot back with `release(lane)`, once.
   */
  wait(lane: Lane, signal: AbortSignal): Promise<void> {
    // a listener (`subagent/prepare`, `subagent/admit`) may have aborted it already: its abort
    // event is over, so waiting would last until a slot frees, not end at once
    if (signal.aborted) return Promise.reject(this.abortError(signal))
    const line = (lane.line ??= new WaitingLine())
    return new Promise<void>((resolve, reject) => {
      let place: Place<Waiter> | undefined
      // one abort listener per signal, shared by every start waiting on it (a fan-out hands its
      // turn's signal to each): a listener each warned MaxListenersExceeded from 11 on
      const subscription: AbortSubscription = {
        onAbort: () => {
          place?.remove()
          reject(this.abortError(signal))
        },
      }
      place = line.push({
        resolve: () => {
          unsubscribe(signal, subscription)
          resolve()
        },
        reject: (error) => {
          unsubscribe(signal, subscription)
          reject(error)
        },
      })
      subscribe(signal, subscription)
    })
  }

  /** Gives back one slot of `lane` and lets the next waiter in. */
  release(lane: Lane): void {
    lane.live--
    if (lane.line?.size) this.#admit(lane)
  }

  /** Lets waiters in while slots are free (after the limit rose). */
  drain(): void {
    for (const lane of this.#lanes.values()) this.#admit(lane)
  }

  /** Rejects every start still waiting for `parentId` and drops its lane (its parent is gone). */
  close(parentId: string, error: (parentId: string) => unknown): void {
    const lane = this.#lanes.get(parentId)
    if (!lane) return
    this.#lanes.delete(parentId)
    if (lane.line) for (const waiter of lane.line.drain()) waiter.reject(error(parentId))
  }

  /** Lets every waiter through uncounted (the plugin is unloading: nothing will free a slot). */
  releaseAll(): void {
    for (const lane of this.#lanes.values()) {
      if (!lane.line) continue
      for (const waiter of lane.line.drain()) {
        lane.live++
        waiter.resolve()
      }
    }
  }

  #admit(lane: Lane): void {
    const line = lane.line
    while (line?.size && lane.live < this.limit()) {
      lane.live++
      line.shift()!.resolve()
    }
  }
}
