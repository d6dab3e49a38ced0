/**
 * Compile-time checks of the session event union: an unnarrowed event's data is unknown, a guard
 * narrows it. Each `@ts-expect-error` line pins code that must not compile.
 */
import { isEvent } from '../../lib/session/session-event.ts'
import type { SessionEvent } from '../../lib/types.ts'

export function readTurn(event: SessionEvent): number | undefined {
  // @ts-expect-error an event's data is unknown until a guard narrows it
  const unnarrowed: number = event.data.turn
  void unnarrowed
  return isEvent(event, 'turn/end') ? event.data.turn : undefined
}
