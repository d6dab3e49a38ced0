/**
 * The synchronous entry of `start` (SPEC §2.1): every check runs before the first await, in the
 * spec's order, and none touches `parent.ctx`.
 */
import { contentBlockProblem } from '../../lib/content.ts'
import type { Listener } from '../../lib/dispatch.ts'
import { assertMaxDepth, assertWithinCap, childDepth, lowerCap, parentDepth } from '../../lib/delegation/depth.ts'
import { abortedBeforePublication, SubagentError, thrownMessage, UnsupportedCapabilityError } from '../../lib/errors.ts'
import { approvalPolicyProblems } from '../../lib/approval/policy.ts'
import { forkSeed } from '../../lib/session/fork-seed.ts'
import { type RecordedHeaderField, recordedHeaderValue } from '../../lib/session/session-header.ts'
import { assertReservation } from '../../lib/delegation/tree-budget.ts'
import type { ApprovalPolicy, RunTicket, SessionEvent, SubagentPlan, SubagentStartOptions, SubagentStartRequest, ToolGuard, Usage } from '../../lib/types.ts'
import { flatUuid } from '../../lib/uuid.ts'

/** Request fields that only a plugin can serve: unclaimed, they reject the start. */
export const capabilityFields = ['outputSchema', 'budget', 'approval'] as const

export { abortedBeforePublication }

/** A plan whose depth cap only goes down. */
export class StartPlan implements SubagentPlan {
  // `declare`d fields, assigned in the constructor: see docs/performance.md, "Declared fields"
  declare readonly request: SubagentStartRequest
  declare readonly mode: 'spawn' | 'fork'
  declare readonly parentDepth: number
  declare readonly childDepth: number
  declare readonly seed: readonly SessionEvent[] | undefined
  /** The child's id for its whole life: one flat string, not the rope randomUUID() returns. */
  declare readonly childId: string
  /** `request.signal` as step 3 checked it: the start reads the caller's field once. */
  declare readonly signal: AbortSignal
  /** With `inheritRestrictions`: the global tools the parent saw at entry, the child's ceiling. */
  declare inheritedTools?: readonly string[]
  /** With `inheritRestrictions`: the guards of the parent's own context at entry, the child's too. */
  declare inheritedGuards?: readonly ToolGuard[]
  /** With `inheritRestrictions`: the parent's own `tools/pre-execute` listeners at entry, the child's too. */
  declare inheritedPreExecute?: readonly Listener[]
  /** Claimed capability fields and their validators; made on the first claim. */
  declare claims?: Map<string, (() => void) | undefined>
  #depthCap: number
  #recorded: { agent?: string; approval?: ApprovalPolicy } | undefined
  #ticket: RunTicket | undefined
  #moreTickets: RunTicket[] | undefined

  constructor(
    request: SubagentStartRequest,
    mode: 'spawn' | 'fork',
    parentDepth: number,
    childDepth: number,
    seed: readonly SessionEvent[] | undefined,
    signal: AbortSignal,
  ) {
    this.request = request
    this.signal = signal
    this.mode = mode
    this.parentDepth = parentDepth
    this.childDepth = childDepth
    this.seed = seed
    this.childId = flatUuid()
    this.inheritedTools = undefined
    this.inheritedGuards = undefined
    this.inheritedPreExecute = undefined
    this.claims = undefined
    this.#depthCap = request.maxDepth ?? Number.POSITIVE_INFINITY
    this.#recorded = undefined
  }

  get recordedHeader(): { readonly agent?: string; readonly approval?: ApprovalPolicy } | undefined {
    return this.#recorded
  }

  recordHeader(field: RecordedHeaderField, value: unknown): void {
    const checked = recordedHeaderValue(field, value)
    const recorded = (this.#recorded ??= {})
    if (field === 'agent') recorded.agent = checked as string
    else recorded.approval = checked as ApprovalPolicy
  }

  get depthCap(): number {
    return this.#depthCap
  }

  /** Lowers the cap to `cap`; a larger one keeps the current cap. Throws `TypeError` unless `cap` is a non-negative safe integer. */
  capDepth(cap: number): void {
    this.#depthCap = lowerCap(this.#depthCap, cap, 'subagent plan depth cap')
  }

  claim(field: string, validate?: () => void): void {
    ;(this.claims ??= new Map()).set(field, validate)
  }

  hold(ticket: RunTicket): void {
    // one ticket (a tree budget) is the common case: no array for it
    if (this.#ticket === undefined) this.#ticket = ticket
    else (this.#moreTickets ??= []).push(ticket)
  }

  /** What the run's settle path calls: the held ticket, or one that calls every held ticket in order. */
  ticket(): RunTicket | undefined {
    const first = this.#ticket
    const more = this.#moreTickets
    if (!more) return first
    const all = [first as RunTicket, ...more]
    return {
      settled: () => {
        let usage: Usage | undefined
        let failure: { error: unknown } | undefined
        // every ticket is given back even when one throws; the first throw then rejects the result
        for (const ticket of all) {
          try {
            const answer = ticket.settled()
            if (usage === undefined) usage = answer
          } catch (error) {
            failure ??= { error }
          }
        }
        if (failure) throw failure.error
        return usage
      },
    }
  }
}

/**
 * The `TypeError` for a request field whose getter threw: a hostile or half-built parent must
 * reject the start with the field's name, not a bare runtime message.
 */
function unreadable(path: string, error: unknown): TypeError {
  return new TypeError(`subagent request ${path} could not be read: ${thrownMessage(error)}`, { cause: error })
}

/** `target[key]`, or the `TypeError` naming `subagent request <path>` when its getter throws. */
function readField(target: object, key: string, path: string): unknown {
  try {
    return (target as Record<string, unknown>)[key]
  } catch (error) {
    throw unreadable(path, error)
  }
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null
}

/** The fields of a parent that step 0 reads, each still to be checked. */
interface ParentFields {
  readonly id?: unknown
  readonly followup?: unknown
  readonly options?: unknown
  readonly session?: unknown
}

/** True when `parent` has the fields SPEC §2.1 step 0 asks of an agent. Throws only for a throwing getter. */
function isAgentShaped(parent: unknown): boolean {
  if (!isObject(parent)) return false
  const fields: ParentFields = parent
  // one try for every read, `path` naming the one in progress: a start reads these once each,
  // and a helper call per read cost more than the check itself
  let path = 'parent.id'
  try {
    if (typeof fields.id !== 'string') return false
    path = 'parent.followup'
    if (typeof fields.followup !== 'function') return false
    path = 'parent.options'
    if (!isObject(fields.options)) return false
    path = 'parent.session'
    const session = fields.session as { readonly header?: unknown; readonly events?: unknown } | undefined
    if (!isObject(session)) return false
    path = 'parent.session.header'
    if (!isObject(session.header)) return false
    path = 'parent.session.events'
    return Array.isArray(session.events)
  } catch (error) {
    throw unreadable(path, error)
  }
}

function assertRequestShape(request: SubagentStartRequest): void {
  if (typeof request !== 'object' || request === null) throw new TypeError('subagent request must be an object')
  const { prompt } = request
  if (!isAgentShaped(readField(request, 'parent', 'parent'))) throw new TypeError('subagent request parent must be an agent')
  if (typeof prompt !== 'string' && !Array.isArray(prompt)) {
    throw new TypeError('subagent request prompt must be a string or an array of content blocks')
  }
  if (Array.isArray(prompt)) {
    for (let i = 0; i < prompt.length; i++) {
      const problem = contentBlockProblem(prompt[i])
      if (problem) throw new TypeError(`subagent request prompt block ${i} ${problem}`)
    }
  }
  const { label, persona, agentOptions, toolFilter, inheritRestrictions } = request
  if (inheritRestrictions !== undefined && typeof inheritRestrictions !== 'boolean') {
    throw new TypeError('subagent request inheritRestrictions must be a boolean')
  }
  if (label !== undefined && typeof label !== 'string') throw new TypeError('subagent request label must be a string')
  if (persona !== undefined && typeof persona !== 'string') throw new TypeError('subagent request persona must be a string')
  if (request.callId !== undefined && typeof request.callId !== 'string') {
    throw new TypeError('subagent request callId must be a string')
  }
  // step 0 whether or not a plugin serves the field: its shape is public (SPEC §9), its service is not
  if (request.budget !== undefined) assertReservation(request.budget)
  if (request.approval !== undefined) assertApprovalPolicy(request.approval)
  if (agentOptions !== undefined && (typeof agentOptions !== 'object' || agentOptions === null || Array.isArray(agentOptions))) {
    throw new TypeError('subagent request agentOptions must be an object')
  }
  if (toolFilter !== undefined) {
    if (typeof toolFilter !== 'object' || toolFilter === null || Array.isArray(toolFilter)) {
      throw new TypeError('subagent request toolFilter must be an object')
    }
    for (const key of ['allow', 'deny'] as const) {
      const names = toolFilter[key]
      if (names !== undefined && (!Array.isArray(names) || names.some((name) => typeof name !== 'string'))) {
        throw new TypeError(`subagent request toolFilter.${key} must be an array of tool names`)
      }
    }
  }
}

/** Steps 1–4: shape, `maxDepth`, signal, parent and child depth; the plan. Throws the spec's errors. */
export function checkEntry(
  request: SubagentStartRequest,
  seed: readonly SessionEvent[] | undefined,
): StartPlan {
  assertRequestShape(request)
  assertMaxDepth(request.maxDepth)
  const { signal } = request
  if (!(signal instanceof AbortSignal)) throw new TypeError('subagent request signal must be an AbortSignal')
  if (signal.aborted) {
    throw new SubagentError('ABORTED', abortedBeforePublication, { cause: signal.reason })
  }
  const { parent } = request
  let headerDepth: number | undefined
  let runtimeDepth: unknown
  let path = 'parent.session.header.delegationDepth'
  try {
    headerDepth = parent.session.header.delegationDepth
    path = 'parent.options.subagentDepth'
    runtimeDepth = parent.options.subagentDepth
  } catch (error) {
    throw unreadable(path, error)
  }
  const depth = parentDepth(headerDepth, runtimeDepth)
  return new StartPlan(request, seed ? 'fork' : 'spawn', depth, childDepth(depth), seed, signal)
}

/**
 * The seed of a fork: the parent's events through its last `turn/end`. `undefined` when the request
 * is not shaped for one (the entry checks then say why, in SPEC order). Throws a `TypeError` naming
 * the field for a throwing getter or an entry that is not an event object.
 */
export function readForkSeed(request: SubagentStartRequest): readonly SessionEvent[] | undefined {
  if (!isObject(request)) return undefined
  const parent = readField(request, 'parent', 'parent')
  if (!isObject(parent)) return undefined
  const session = readField(parent, 'session', 'parent.session')
  if (!isObject(session)) return undefined
  const events = readField(session, 'events', 'parent.session.events')
  if (!Array.isArray(events)) return undefined
  for (let i = 0; i < events.length; i++) {
    const event: unknown = events[i]
    if (!isObject(event) || typeof readField(event, 'type', `parent.session.events[${i}].type`) !== 'string') {
      throw new TypeError(`subagent request parent.session.events[${i}] must be a session event`)
    }
  }
  return forkSeed(events as readonly SessionEvent[])
}

/** The `seed` of `start`'s options; a `TypeError` naming the field for options that cannot be read. */
export function readStartSeed(options: SubagentStartOptions | undefined): readonly SessionEvent[] | undefined {
  if (options === undefined) return undefined
  if (!isObject(options)) throw new TypeError('subagent start options must be an object')
  try {
    return options.seed
  } catch (error) {
    throw new TypeError(`subagent start options seed could not be read: ${thrownMessage(error)}`, { cause: error })
  }
}

/** Step 0 for `approval` (SPEC §11.1 shape): a `TypeError` listing every problem. */
function assertApprovalPolicy(value: unknown): void {
  const problems = approvalPolicyProblems(value, 'subagent request approval')
  if (problems.length) throw new TypeError(problems.join('; '))
}

/** Step 5, after `subagent/prepare` listeners had their say: throws `SubagentDepthError` beyond the cap. */
export function checkDepthCap(plan: StartPlan): void {
  assertWithinCap(plan.childDepth, plan.depthCap)
}

/** Step 6: every capability field set is claimed, and its claim's validator passes. */
export function checkCapabilities(plan: StartPlan): void {
  const { request } = plan
  for (let i = 0; i < capabilityFields.length; i++) {
    const field = capabilityFields[i]
    if (request[field] === undefined) continue
    if (!plan.claims?.has(field)) throw new UnsupportedCapabilityError(field)
    plan.claims.get(field)?.()
  }
}

/**
 * SPEC §8.3, after step 6: records the global tools the parent sees now as the child's ceiling, and
 * the guards and `tools/pre-execute` listeners of the parent's own context as the child's (a guard
 * or a listener's deny refuses a call where `restrict` hides a tool; all are the parent's
 * restrictions, so a child may not get past any).
 * Throws `TypeError` `subagent tool "<name>" is not available to the parent` for a
 * `toolFilter.allow` name outside it (unknown names included): a filter may only narrow.
 */
export function inheritRestrictions(
  plan: StartPlan,
  parentTools: readonly string[],
  parentGuards: readonly ToolGuard[],
  parentPreExecute: readonly Listener[],
): void {
  const visible = new Set(parentTools)
  for (const name of plan.request.toolFilter?.allow ?? []) {
    if (!visible.has(name)) throw new TypeError(`subagent tool "${name}" is not available to the parent`)
  }
  plan.inheritedTools = parentTools
  plan.inheritedGuards = parentGuards
  plan.inheritedPreExecute = parentPreExecute
}
