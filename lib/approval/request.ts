/**
 * Approval requests and decisions (SPEC §11.2): their shapes, the check of a decision given to
 * `approvals.decide`, and where in its tree an asking agent sits. Pure: no cordis, no clock.
 */
import { closestName } from '../text/closest-name.ts'
import type { Agent, SessionEvent } from '../types.ts'

/** One call waiting for a person's decision, as answerers see it. Frozen. */
export interface ApprovalRequest {
  readonly id: string
  /** The asking agent. */
  readonly agentId: string
  /** The root of its tree: requests of one tree share one queue (SPEC §11.3). */
  readonly rootId: string
  /** Agent ids from the root to the asking agent, both included. */
  readonly path: readonly string[]
  /** The asking agent's delegation depth (0 for a root). */
  readonly depth: number
  /** The asking agent's label (its start request's), when it has one. */
  readonly label?: string
  readonly tool: string
  /** The call's arguments, parsed (frozen JSON). */
  readonly args: unknown
  readonly callId: string
  /** When it was asked, in ms since the epoch. */
  readonly createdAt: number
}

/** Who decided: a person (through `decide`), the policy, the timeout, a cancelled turn, a resume. */
export type DecidedBy = 'user' | 'policy' | 'timeout' | 'cancel' | 'resume'

/** What `approvals.decide(id, answer)` takes. */
export interface ApprovalAnswer {
  readonly approved: boolean
  /** Why; a denial without one reads `denied by the user`. */
  readonly reason?: string
  /** `'tree'`: later calls of the same tool anywhere in the tree get the same answer unasked. */
  readonly remember?: 'tree'
}

/** A decision as recorded (`approval/decided` session event) and emitted (`approval/decided` hook). Frozen. */
export interface ApprovalDecision {
  readonly requestId: string
  readonly approved: boolean
  readonly reason?: string
  readonly remember?: 'tree'
  readonly by: DecidedBy
}

/** Session event types the asking agent's session records. */
export const REQUESTED_EVENT = 'approval/requested'
export const DECIDED_EVENT = 'approval/decided'

/** `approval/requested` session event data. */
export interface RequestedRecord {
  readonly turn: number
  readonly step: number
  readonly callId: string
  readonly name: string
  /** The call's arguments, parsed. */
  readonly arguments: unknown
  readonly requestId: string
}

const answerKeys = ['approved', 'reason', 'remember'] as const

/**
 * `value` checked as a decision for `decide`: a frozen copy with only the fields given. Throws a
 * `TypeError` naming the problem: not an object, an unknown key (with a `did you mean`), an
 * `approved` that is not a boolean, a `reason` that is not a string, a `remember` other than `'tree'`.
 */
export function readAnswer(value: unknown): ApprovalAnswer {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError('approval decision must be an object with approved, reason and/or remember')
  }
  for (const key of Object.keys(value)) {
    if ((answerKeys as readonly string[]).includes(key)) continue
    const closest = closestName(key, answerKeys)
    throw new TypeError(`approval decision has unknown key ${JSON.stringify(key)}${closest ? ` (did you mean "${closest}"?)` : ''}`)
  }
  const { approved, reason, remember } = value as Record<string, unknown>
  if (typeof approved !== 'boolean') throw new TypeError('approval decision approved must be a boolean')
  if (reason !== undefined && typeof reason !== 'string') throw new TypeError('approval decision reason must be a string')
  if (remember !== undefined && remember !== 'tree') {
    const near = typeof remember === 'string' && closestName(remember, ['tree']) ? ' (did you mean "tree"?)' : ''
    throw new TypeError(`approval decision remember must be "tree"${near}`)
  }
  const answer: { approved: boolean; reason?: string; remember?: 'tree' } = { approved }
  if (reason !== undefined) answer.reason = reason
  if (remember !== undefined) answer.remember = remember
  return Object.freeze(answer)
}

/** Deepest parent chain followed; a longer (or cyclic, hand-edited) chain stops here. */
const MAX_CHAIN = 10_000

/** Where an agent sits in its tree. */
export interface Lineage {
  readonly rootId: string
  /** Agent ids from the root to the agent, both included. */
  readonly path: readonly string[]
  readonly depth: number
}

/**
 * `agent`'s place in its tree: follows `header.parentSession` through `lookup` (the live agents).
 * When an ancestor is not live (a child resumed without its parent), the `parentSession` it names
 * is taken as the root, as `rootIdOf` does. `depth` is the header's `delegationDepth`, deepened by
 * a valid runtime `subagentDepth` (the driver counts it so).
 */
export function lineageOf(agent: Agent, lookup: (id: string) => Agent | undefined): Lineage {
  const path = [agent.id]
  let current = agent
  for (let hops = 0; hops < MAX_CHAIN; hops++) {
    const parentId = current.session.header.parentSession
    if (parentId === undefined) break
    path.push(parentId)
    const parent = lookup(parentId)
    if (!parent) break
    current = parent
  }
  path.reverse()
  const runtime = agent.options.subagentDepth
  const headerDepth = agent.session.header.delegationDepth ?? 0
  const depth = Number.isSafeInteger(runtime) && (runtime as number) > headerDepth ? (runtime as number) : headerDepth
  return { rootId: path[0]!, path: Object.freeze(path), depth }
}

/**
 * The turn and step the agent's session is in: those of its last `step/start` (a call is made
 * within a step), or `{turn: 0, step: 0}` for a session without one (a call made from code for an
 * agent that has not run yet).
 */
export function currentStep(events: readonly SessionEvent[]): { turn: number; step: number } {
  for (let index = events.length - 1; index >= 0; index--) {
    const event = events[index]!
    if (event.type === 'step/start') {
      const { turn, step } = event.data as { turn: number; step: number }
      return { turn, step }
    }
  }
  return { turn: 0, step: 0 }
}
