/**
 * One session log: a frozen header and an append-only list of frozen events (`seq === index`).
 * A long step's streamed deltas are compact events (`lib/session/streamed-steps.ts`).
 */
import { SubagentError } from '../../../lib/errors.ts'
import { type JsonDataViolation, jsonDataViolation, MAX_JSON_DATA_DEPTH } from '../../../lib/json/json-data.ts'
import { eventDataProblem } from '../../../lib/session/session-event-shape.ts'
import { isCompactDelta, type StreamedStep } from '../../../lib/session/streamed-steps.ts'
import type { AnySessionEvent, ContentBlock, SessionEvent, SessionEventData, SessionEventType, SessionHeader, Usage } from '../../../lib/types.ts'
import type { AgentScope } from '../scope.ts'

/** Called after every append of a published session. Must not throw. */
export type AppendObserver = (session: SessionLog, event: SessionEvent) => void

/**
 * Validates a seed or a stored session (contiguous `seq` from 0, string types, JSON data, and the
 * data shape of each event of a type the loop writes: `lib/session/session-event-shape.ts`) and returns
 * frozen events. Throws `SubagentError` (`INVALID_SESSION`) naming the first bad event.
 */
export function validateSeed(seed: readonly SessionEvent[]): SessionEvent[] {
  if (!Array.isArray(seed)) throw new SubagentError('INVALID_SESSION', 'session seed must be an array of events')
  const events: SessionEvent[] = new Array(seed.length)
  for (let i = 0; i < seed.length; i++) {
    const event = seed[i]
    if (typeof event !== 'object' || event === null) {
      throw new SubagentError('INVALID_SESSION', `session seed event ${i} must be an object`)
    }
    if (event.seq !== i) {
      throw new SubagentError('INVALID_SESSION', `session seed event ${i} has seq ${String(event.seq)}, expected ${i}`)
    }
    if (typeof event.type !== 'string' || !event.type) {
      throw new SubagentError('INVALID_SESSION', `session seed event ${i} must have a non-empty string type`)
    }
    // a compacted delta is ours and JSON by construction: reading its data would only rebuild it
    if (event.seq === i && isCompactDelta(event)) {
      events[i] = event
      continue
    }
    const violation = jsonDataViolation(event.data)
    if (violation) {
      const why = violation.kind === 'too-deep' ? ` nested at most ${MAX_JSON_DATA_DEPTH} levels deep` : ''
      throw new SubagentError('INVALID_SESSION', `session seed event ${i} data must be JSON data${why}`)
    }
    // events the loop wrote are already frozen JSON: share them instead of copying
    const checked =
      Object.isFrozen(event) && isDeepFrozen(event.data) ? event : Object.freeze({ seq: i, type: event.type, data: deepFreeze(structuredClone(event.data)) })
    // the loop's readers take a known event's fields as typed (read back malformed, every later
    // turn failed on them); the copy is what is checked, so the check and the log see one value
    const problem = eventDataProblem(checked.type, checked.data)
    if (problem) throw new SubagentError('INVALID_SESSION', `session seed event ${i} ${JSON.stringify(checked.type)} ${problem}`)
    events[i] = checked
  }
  return events
}

function appendViolationMessage(type: string, violation: JsonDataViolation): string {
  const head = `session event ${JSON.stringify(type)} data must be JSON data`
  if (violation.kind === 'too-deep') return `${head} nested at most ${MAX_JSON_DATA_DEPTH} levels deep`
  return `${head}: ${violation.path} is ${violation.found}`
}

/**
 * Freezes `value` down to its leaves. A frozen container is walked too: `Object.freeze` is
 * shallow, so a caller's frozen object may still hold arrays or objects it can change later.
 */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    Object.freeze(value)
    for (const key in value) deepFreeze((value as Record<string, unknown>)[key])
  }
  return value
}

/** True when `value` (JSON data) is frozen down to its leaves: only then may a seed share it. */
function isDeepFrozen(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true
  if (!Object.isFrozen(value)) return false
  for (const key in value) if (!isDeepFrozen((value as Record<string, unknown>)[key])) return false
  return true
}

export class SessionLog {
  // `declare`d fields, assigned in the constructor: see docs/performance.md, "Declared fields"
  declare readonly header: SessionHeader
  readonly #events: SessionEvent[]
  /** Set on publication; until then appends are silent (SPEC §1.3 creation transaction). */
  declare observer?: AppendObserver
  /** The scope of the session's agent, bound on publication: the observer's listeners. */
  declare scope?: AgentScope

  constructor(header: SessionHeader, events: SessionEvent[] = []) {
    this.header = header
    this.#events = events
    this.observer = undefined
    this.scope = undefined
  }

  get id(): string { return this.header.id }
  get events(): readonly SessionEvent[] { return this.#events }

  /**
   * Appends one frozen event; `data` is frozen as given (the loop passes fresh JSON objects).
   * Throws `SubagentError` (`INVALID_SESSION`), appending nothing, for an empty type, data that
   * breaks the JSON-data rule a seed or a stored session is read back with (`lib/json/json-data.ts`),
   * or data of a loop event type with the wrong shape (`lib/session/session-event-shape.ts`).
   */
  append<T extends string>(type: T, data: T extends SessionEventType ? SessionEventData[T] : unknown): SessionEvent<T> {
    if (typeof type !== 'string' || !type) {
      throw new SubagentError('INVALID_SESSION', 'session event type must be a non-empty string')
    }
    const violation = jsonDataViolation(data)
    if (violation) throw new SubagentError('INVALID_SESSION', appendViolationMessage(type, violation))
    // the loop's readers take a known event's fields as typed, and a seed or a stored session
    // with a malformed one is refused: the log must not take what it could not be read back from
    const problem = eventDataProblem(type, data)
    if (problem) throw new SubagentError('INVALID_SESSION', `session event ${JSON.stringify(type)} ${problem}`)
    const event: AnySessionEvent = Object.freeze({ seq: this.#events.length, type, data: deepFreeze(data) })
    // the one place an event is typed by its `type`: the signature tied `data` to `type` already
    return this.#commit(event) as SessionEvent<T>
  }

  /**
   * `append('turn/start', {turn, trigger: 'message'})` for an agent's own turn count, and
   * `append('step/start', {turn, step})` for the loop's own step numbers: flat data of the host's
   * integers, frozen as built, without the JSON-data walk (every turn appends both).
   */
  appendTurnStart(turn: number): SessionEvent<'turn/start'> {
    return this.#add('turn/start', { turn, trigger: 'message' as const })
  }

  /**
   * Appends the loop's `user/message` or `assistant/message`, built from values already checked
   * where they were read once (`copyContent`'s copies, a model's checked parts): its blocks,
   * content, usage and data are frozen as built, without the JSON-data walk. The objects must be
   * fresh and unshared (a `source` may be a shared frozen one).
   */
  appendMessage<T extends 'user/message' | 'assistant/message'>(type: T, data: SessionEventData[T]): SessionEvent<T> {
    const { content } = data
    for (let i = 0; i < content.length; i++) Object.freeze(content[i])
    Object.freeze(content)
    const usage = (data as { usage?: Usage }).usage
    if (usage) Object.freeze(usage)
    return this.#add(type, data)
  }

  /**
   * Appends the loop's `tool/result` for one call, without the JSON-data walk: the call's id and
   * name as the model part was checked, and a result the tool pipeline built from checked parts
   * (`copyContent`'s copies, its own error texts). The content and its blocks are frozen in place,
   * as `append` would; they must be fresh JSON blocks.
   */
  appendToolResult(turn: number, step: number, callId: string, name: string, isError: boolean, content: ContentBlock[]): SessionEvent<'tool/result'> {
    for (let i = 0; i < content.length; i++) Object.freeze(content[i])
    Object.freeze(content)
    return this.#add('tool/result', { turn, step, callId, name, isError, content })
  }

  /** See `appendTurnStart`. */
  appendStepStart(turn: number, step: number): SessionEvent<'step/start'> {
    return this.#add('step/start', { turn, step })
  }

  /**
   * `append('turn/end', {turn, reason})` for a reason the loop made of its own values alone (its
   * shared frozen `completed`, taken as it is), without the JSON-data walk: every plain turn ends so. A reason that
   * may carry a listener's or a caller's values (a budget limit, a cancel cause) takes `append`.
   */
  appendTurnEnd(turn: number, reason: Readonly<{ kind: 'completed' }>): SessionEvent<'turn/end'> {
    return this.#add('turn/end', { turn, reason })
  }

  /**
   * `append('assistant/delta', {turn, step, text})` for the loop's stream, without the JSON-data
   * walk: the loop's step numbers and a part's text, checked to be a non-empty string already.
   */
  appendDelta(turn: number, step: number, text: string): SessionEvent<'assistant/delta'> {
    return this.#add('assistant/delta', { turn, step, text })
  }

  /** Appends the compact event of `stream`'s next piece, or `undefined` when it cannot follow on. */
  appendStreamed(stream: StreamedStep): SessionEvent<'assistant/delta'> | undefined {
    const seq = this.#events.length
    if (!stream.continuesAt(seq)) return undefined
    return this.#commit(stream.next(seq))
  }

  /** Appends the loop's own event of `type`: `data` is frozen as given (its parts already are). */
  #add<T extends SessionEventType>(type: T, data: SessionEventData[T]): SessionEvent<T> {
    return this.#commit(Object.freeze({ seq: this.#events.length, type, data: Object.freeze(data) }) as AnySessionEvent as SessionEvent<T>)
  }

  /** Appends a frozen event and tells the observer (once published). */
  #commit<E extends AnySessionEvent>(event: E): E {
    this.#events.push(event)
    this.observer?.(this, event)
    return event
  }
}
