/**
 * One session log: a frozen header and an append-only list of frozen events (`seq === index`).
 */
import { SubagentError } from '../../../lib/errors.ts'
import { type JsonDataViolation, jsonDataViolation, MAX_JSON_DATA_DEPTH } from '../../../lib/json-data.ts'
import type { SessionEvent, SessionEventData, SessionEventType, SessionHeader } from '../../../lib/types.ts'
import type { AgentScope } from '../scope.ts'

/** Called after every append of a published session. Must not throw. */
export type AppendObserver = (session: SessionLog, event: SessionEvent) => void

const headerIntegers = ['delegationDepth', 'seedLength'] as const

function isNonNegativeSafeInteger(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0 && !Object.is(value, -0)
}

/**
 * Builds a frozen header, rejecting malformed fields with
 * `session header <field> must be a non-negative safe integer` (and similar for strings).
 */
export function buildHeader(fields: Record<string, unknown>): SessionHeader {
  if (typeof fields.id !== 'string' || !fields.id) {
    throw new SubagentError('INVALID_SESSION', 'session header id must be a non-empty string')
  }
  if (typeof fields.createdAt !== 'number' || !Number.isFinite(fields.createdAt)) {
    throw new SubagentError('INVALID_SESSION', 'session header createdAt must be a finite number')
  }
  const header: Record<string, unknown> = { id: fields.id, createdAt: fields.createdAt }
  for (const key of ['cwd', 'parentSession', 'label', 'callId'] as const) {
    if (fields[key] === undefined) continue
    if (typeof fields[key] !== 'string') {
      throw new SubagentError('INVALID_SESSION', `session header ${key} must be a string`)
    }
    header[key] = fields[key]
  }
  if (fields.origin !== undefined) {
    if (fields.origin !== 'subagent') {
      throw new SubagentError('INVALID_SESSION', 'session header origin must be "subagent"')
    }
    header.origin = fields.origin
  }
  for (const key of headerIntegers) {
    if (fields[key] === undefined) continue
    if (!isNonNegativeSafeInteger(fields[key])) {
      throw new SubagentError('INVALID_SESSION', `session header ${key} must be a non-negative safe integer`)
    }
    header[key] = fields[key]
  }
  return Object.freeze(header) as unknown as SessionHeader
}

/** Validates a seed (contiguous `seq` from 0, string types, JSON data) and returns frozen events. */
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
    // events the loop wrote are already frozen JSON: share them instead of copying
    const violation = jsonDataViolation(event.data)
    if (violation) {
      const why = violation.kind === 'too-deep' ? ` nested at most ${MAX_JSON_DATA_DEPTH} levels deep` : ''
      throw new SubagentError('INVALID_SESSION', `session seed event ${i} data must be JSON data${why}`)
    }
    if (Object.isFrozen(event) && Object.isFrozen(event.data)) {
      events[i] = event
      continue
    }
    events[i] = Object.freeze({ seq: i, type: event.type, data: deepFreeze(structuredClone(event.data)) })
  }
  return events
}

function appendViolationMessage(type: string, violation: JsonDataViolation): string {
  const head = `session event ${JSON.stringify(type)} data must be JSON data`
  if (violation.kind === 'too-deep') return `${head} nested at most ${MAX_JSON_DATA_DEPTH} levels deep`
  return `${head}: ${violation.path} is ${violation.found}`
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const key in value) deepFreeze((value as Record<string, unknown>)[key])
  }
  return value
}

export class SessionLog {
  readonly #events: SessionEvent[]
  /** Set on publication; until then appends are silent (SPEC §1.3 creation transaction). */
  observer?: AppendObserver
  /** The scope of the session's agent, bound on publication: the observer's listeners. */
  scope?: AgentScope

  constructor(readonly header: SessionHeader, events: SessionEvent[] = []) {
    this.#events = events
  }

  get id(): string { return this.header.id }
  get events(): readonly SessionEvent[] { return this.#events }

  /**
   * Appends one frozen event; `data` is frozen as given (the loop passes fresh JSON objects).
   * Throws `SubagentError` (`INVALID_SESSION`), appending nothing, for an empty type or data that
   * breaks the JSON-data rule a seed or a stored session is read back with (`lib/json-data.ts`).
   */
  append<T extends string>(type: T, data: T extends SessionEventType ? SessionEventData[T] : unknown): SessionEvent<T> {
    if (typeof type !== 'string' || !type) {
      throw new SubagentError('INVALID_SESSION', 'session event type must be a non-empty string')
    }
    const violation = jsonDataViolation(data)
    if (violation) throw new SubagentError('INVALID_SESSION', appendViolationMessage(type, violation))
    const event = Object.freeze({ seq: this.#events.length, type, data: deepFreeze(data) }) as SessionEvent<T>
    this.#events.push(event)
    this.observer?.(this, event)
    return event
  }
}
