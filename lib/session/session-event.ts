/**
 * Type guards over session events: a `SessionEvent` is any event until one of these narrows it to
 * a type the loop writes, with its `data` typed. Pure: no cordis, no I/O.
 */
import type { KnownSessionEvent, SessionEvent, SessionEventType, TypedSessionEvent } from '../types.ts'

const knownTypes: Readonly<Record<SessionEventType, true>> = {
  'turn/start': true,
  'user/message': true,
  'step/start': true,
  'assistant/delta': true,
  'assistant/message': true,
  'tool/result': true,
  'turn/end': true,
  'session/end-seed': true,
}

/** True when `event` has type `type`; narrows its `data` to that type's payload. */
export function isEvent<T extends SessionEventType>(event: SessionEvent, type: T): event is TypedSessionEvent<T> {
  return event.type === type
}

/** True when `event` has one of the loop's types; a `switch` on its `type` then narrows `data`. */
export function isKnownEvent(event: SessionEvent): event is KnownSessionEvent {
  return Object.hasOwn(knownTypes, event.type)
}
