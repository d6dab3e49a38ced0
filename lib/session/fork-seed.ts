/**
 * The seed of a forked child (SPEC §2): the parent's history up to its last completed turn.
 */
import type { SessionEvent } from '../types.ts'

const EMPTY: readonly SessionEvent[] = Object.freeze([])

/**
 * The parent's events from index 0 through the last `turn/end`, inclusive: a slice that shares the
 * (frozen) events. A parent with no `turn/end` yields an empty, frozen seed, so it forks like a
 * spawn. An unfinished trailing turn is never part of the seed.
 */
export function forkSeed(events: readonly SessionEvent[]): readonly SessionEvent[] {
  for (let i = events.length - 1; i >= 0; i--) {
    if (events[i].type === 'turn/end') return events.slice(0, i + 1)
  }
  return EMPTY
}
