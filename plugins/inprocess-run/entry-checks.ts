/**
 * The synchronous entry of `start` (SPEC §2.1): every check runs before the first await, in the
 * spec's order, and none touches `parent.ctx`.
 */
import { contentBlockProblem } from '../../lib/content.ts'
import { assertMaxDepth, assertWithinCap, childDepth, lowerCap, parentDepth } from '../../lib/depth.ts'
import { abortedBeforePublication, SubagentError, thrownMessage, UnsupportedCapabilityError } from '../../lib/errors.ts'
import { forkSeed } from '../../lib/fork-seed.ts'
import type { RunTicket, SessionEvent, SubagentPlan, SubagentStartOptions, SubagentStartRequest, Usage } from '../../lib/types.ts'
import { flatUuid } from '../../lib/uuid.ts'

/** Request fields that only a plugin can serve: unclaimed, they reject the start. */
export const capabilityFields = ['outputSchema', 'budget'] as const

export { abortedBeforePublication }

/** A plan whose depth cap only goes down. */
export class StartPlan implements SubagentPlan {
  // the child's id for its whole life: one flat string, not the rope randomUUID() returns
  readonly childId: string = flatUuid()
  #depthCap: number
  /** With `inheritRestrictions`: the global tools the parent saw at entry, the child's ceiling. */
  inheritedTools?: readonly string[]
  /** Claimed capability fields and their validators; made on the first claim. */
  claims?: Map<string, (() => void) | undefined>
  #ticket: RunTicket | undefined
  #moreTickets: RunTicket[] | undefined

  constructor(
    readonly request: SubagentStartRequest,
    readonly mode: 'spawn' | 'fork',
    readonly parentDepth: number,
    readonly childDepth: number,
    readonly seed: readonly SessionEvent[] | undefined,
  ) {
    this.#depthCap = request.maxDepth ?? Number.POSITIVE_INFINITY
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
 * `target[key]`, or a `TypeError` naming `subagent request <path>` when a getter throws: a hostile
 * or half-built parent must reject the start with the field's name, not a bare runtime message.
 */
function readField(target: object, key: string, path: string): unknown {
  try {
    return (target as Record<string, unknown>)[key]
  } catch (error) {
    throw new TypeError(`subagent request ${path} could not be read: ${thrownMessage(error)}`, { cause: error })
  }
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null
}

/** True when `parent` has the fields SPEC §2.1 step 0 asks of an agent. Throws only for a throwing getter. */
function isAgentShaped(parent: unknown): boolean {
  if (!isObject(parent)) return false
  if (typeof readField(parent, 'id', 'parent.id') !== 'string') return false
  if (typeof readField(parent, 'followup', 'parent.followup') !== 'function') return false
  if (!isObject(readField(parent, 'options', 'parent.options'))) return false
  const session = readField(parent, 'session', 'parent.session')
  if (!isObject(session)) return false
  return isObject(readField(session, 'header', 'parent.session.header')) && Array.isArray(readField(session, 'events', 'parent.session.events'))
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
  const depth = parentDepth(
    readField(parent.session.header, 'delegationDepth', 'parent.session.header.delegationDepth') as number | undefined,
    readField(parent.options, 'subagentDepth', 'parent.options.subagentDepth') as number | undefined,
  )
  return new StartPlan(request, seed ? 'fork' : 'spawn', depth, childDepth(depth), seed)
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
 * SPEC §8.3, after step 6: records the global tools the parent sees now as the child's ceiling.
 * Throws `TypeError` `subagent tool "<name>" is not available to the parent` for a
 * `toolFilter.allow` name outside it (unknown names included): a filter may only narrow.
 */
export function inheritRestrictions(plan: StartPlan, parentTools: readonly string[]): void {
  const visible = new Set(parentTools)
  for (const name of plan.request.toolFilter?.allow ?? []) {
    if (!visible.has(name)) throw new TypeError(`subagent tool "${name}" is not available to the parent`)
  }
  plan.inheritedTools = parentTools
}
