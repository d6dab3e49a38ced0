/**
 * The concurrency queue (SPEC §9): at most `maxConcurrent` unsettled runs per parent; further
 * starts wait first in first out. O(1) per start: a map lookup and a linked-line push or shift.
 */
import { type Place, WaitingLine } from '../../lib/waiting-line.ts'

interface Waiter {
  resolve(): void
  reject(error: unknown): void
}

interface Lane {
  live: number
  readonly line: WaitingLine<Waiter>
}

/** A held slot; `release()` gives it back once (later calls do nothing). */
export interface Slot {
  release(): void
}

export class Admission {
  readonly #lanes = new Map<string, Lane>()

  /** @param limit `maxConcurrent`, read each time a slot is asked for or freed */
  constructor(private readonly limit: () => number) {}

  /**
   * A slot of `parentId`: at once when one is free and nobody waits, else a promise that
   * resolves in line order. An abort while waiting rejects with `abortError()` and leaves the line.
   */
  acquire(parentId: string, signal: AbortSignal, abortError: () => unknown): Slot | Promise<Slot> {
    let lane = this.#lanes.get(parentId)
    if (!lane) this.#lanes.set(parentId, (lane = { live: 0, line: new WaitingLine() }))
    if (lane.line.size === 0 && lane.live < this.limit()) {
      lane.live++
      return this.#slot(parentId, lane)
    }
    const current = lane
    return new Promise<Slot>((resolve, reject) => {
      let place: Place<Waiter> | undefined
      const onAbort = () => {
        place?.remove()
        this.#forget(parentId, current)
        reject(abortError())
      }
      place = current.line.push({
        resolve: () => {
          signal.removeEventListener('abort', onAbort)
          resolve(this.#slot(parentId, current))
        },
        reject: (error) => {
          signal.removeEventListener('abort', onAbort)
          reject(error)
        },
      })
      signal.addEventListener('abort', onAbort, { once: true })
    })
  }

  /** Lets waiters in while slots are free (after a slot is freed or the limit rose). */
  drain(): void {
    for (const [parentId, lane] of this.#lanes) this.#admit(parentId, lane)
  }

  /** Rejects every start still waiting for `parentId` (its parent is gone). */
  close(parentId: string, error: () => unknown): void {
    const lane = this.#lanes.get(parentId)
    if (!lane) return
    for (const waiter of lane.line.drain()) waiter.reject(error())
    this.#forget(parentId, lane)
  }

  /** Lets every waiter through uncounted (the plugin is unloading: nothing will free a slot). */
  releaseAll(): void {
    for (const lane of this.#lanes.values()) {
      for (const waiter of lane.line.drain()) {
        lane.live++
        waiter.resolve()
      }
    }
  }

  #slot(parentId: string, lane: Lane): Slot {
    let held = true
    return {
      release: () => {
        if (!held) return
        held = false
        lane.live--
        this.#admit(parentId, lane)
        this.#forget(parentId, lane)
      },
    }
  }

  #admit(parentId: string, lane: Lane): void {
    while (lane.line.size > 0 && lane.live < this.limit()) {
      lane.live++
      lane.line.shift()!.resolve()
    }
    this.#forget(parentId, lane)
  }

  /** Drops an idle lane, so a parent that delegated once costs nothing afterwards. */
  #forget(parentId: string, lane: Lane): void {
    if (lane.live <= 0 && lane.line.size === 0 && this.#lanes.get(parentId) === lane) this.#lanes.delete(parentId)
  }
}
