/**
 * Sessions and their events (SPEC §1.2).
 */
import type { ApprovalPolicy } from '../approval/policy.ts'
import type { BudgetLimit } from '../errors.ts'
import type { ContentBlock, Usage } from './content.ts'
import type { JsonValue } from './json.ts'

export interface SessionHeader {
  readonly id: string
  readonly createdAt: number
  readonly cwd?: string
  readonly parentSession?: string
  readonly origin?: 'subagent'
  readonly delegationDepth?: number
  readonly seedLength?: number
  /** A child's label, when its start request had one (SPEC §10 lineage). */
  readonly label?: string
  /** The parent's tool call that started the child, when a tool started it (SPEC §10 lineage). */
  readonly callId?: string
  /** The agent definition the child was started from (SPEC §12), a name matching `^[a-z][a-z0-9-]{0,63}$`. */
  readonly agent?: string
  /**
   * The child's approval policy as recorded when it started (SPEC §11.1): its ancestors' and its
   * own, merged strictest, so the guard survives `agents.resume`.
   */
  readonly approval?: ApprovalPolicy
  /**
   * The agent's options as created, without secrets and non-JSON values (SPEC §14): what a resume
   * runs the agent with when the caller passes none.
   */
  readonly agentOptions?: Readonly<Record<string, JsonValue>>
}

export type CancelCause =
  | { kind: 'user' }
  | { kind: 'parent' }
  | { kind: 'disposed' }
  | { kind: 'hook'; reason: string }

export type TurnEndReason =
  | { kind: 'completed' }
  | { kind: 'max-tokens' }
  | { kind: 'aborted'; cause: CancelCause }
  | { kind: 'error'; error: { message: string; code?: string } }
  | { kind: 'blocked' }
  | { kind: 'interrupted' }
  /**
   * A tree budget was spent before a model request (SPEC §9). `used` and `max` are the figures of
   * the budget (tree or reservation) that stopped the turn, when the stopping plugin knows them.
   */
  | { kind: 'budget'; limit: BudgetLimit; used?: number; max?: number }

/** Payloads of the event types the agent loop writes. */
export interface SessionEventData {
  'turn/start': { turn: number; trigger: 'message' }
  'user/message': { content: ContentBlock[]; source: { kind: 'user' | 'plugin' } }
  'step/start': { turn: number; step: number }
  'assistant/delta': { turn: number; step: number; text: string }
  'assistant/message': { turn: number; step: number; content: ContentBlock[]; usage?: Usage; interrupted?: true }
  'tool/result': { turn: number; step: number; callId: string; name: string; isError: boolean; content: ContentBlock[] }
  'turn/end': { turn: number; reason: TurnEndReason }
  'session/end-seed': Record<string, never>
}

export type SessionEventType = keyof SessionEventData

/** An event of one of the loop's types, its `data` typed by `type`. */
export interface TypedSessionEvent<T extends SessionEventType> {
  readonly seq: number
  readonly type: T
  readonly data: SessionEventData[T]
}

/** The loop's events as a union keyed by `type`: a `switch` on `type` narrows `data`. */
export type KnownSessionEvent = { [T in SessionEventType]: TypedSessionEvent<T> }[SessionEventType]

/** An event of any type (plugins append their own); its `data` is unknown until narrowed. */
export interface AnySessionEvent {
  readonly seq: number
  readonly type: string
  readonly data: unknown
}

/**
 * One frozen entry of a session log, `{seq, type, data}` at run time (SPEC §1.2); `seq` equals its
 * index. Unparameterised it is any event: narrow it with `isEvent(event, type)` or
 * `isKnownEvent(event)` (`lib/session/session-event.ts`), never with a cast. `SessionEvent<'turn/end'>`
 * is that event typed.
 */
export type SessionEvent<T extends string = string> = string extends T
  ? KnownSessionEvent | AnySessionEvent
  : T extends SessionEventType
    ? TypedSessionEvent<T>
    : AnySessionEvent

export interface Session {
  readonly id: string
  readonly header: SessionHeader
  readonly events: readonly SessionEvent[]
  /** Appends one event (frozen) and emits `session/event` after the append. */
  append<T extends string>(type: T, data: T extends SessionEventType ? SessionEventData[T] : unknown): SessionEvent<T>
}
