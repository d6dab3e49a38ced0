/**
 * The synchronous entry of `start` (SPEC §2.1): every check runs before the first await, in the
 * spec's order, and none touches `parent.ctx`.
 */
import { contentBlockProblem } from '../../lib/content.ts'
import { assertMaxDepth, assertWithinCap, childDepth, parentDepth } from '../../lib/depth.ts'
import { SubagentError, UnsupportedCapabilityError } from '../../lib/errors.ts'
import type { SessionEvent, SubagentPlan, SubagentStartRequest } from '../../lib/types.ts'

/** Request fields that only a plugin can serve: unclaimed, they reject the start. */
export const capabilityFields = ['outputSchema'] as const

export const abortedBeforePublication = 'subagent request was aborted before child publication'

/** A plan whose depth cap only goes down. */
export class StartPlan implements SubagentPlan {
  #depthCap: number
  /** Claimed capability fields and their validators; made on the first claim. */
  claims?: Map<string, (() => void) | undefined>

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

  set depthCap(value: number) {
    if (typeof value === 'number' && !Number.isNaN(value) && value < this.#depthCap) this.#depthCap = value
  }

  claim(field: string, validate?: () => void): void {
    ;(this.claims ??= new Map()).set(field, validate)
  }
}

function assertRequestShape(request: SubagentStartRequest): void {
  if (typeof request !== 'object' || request === null) throw new TypeError('subagent request must be an object')
  const { parent, prompt } = request
  if (
    typeof parent !== 'object' ||
    parent === null ||
    typeof parent.id !== 'string' ||
    typeof parent.followup !== 'function' ||
    typeof parent.options !== 'object' ||
    parent.options === null ||
    typeof parent.session?.header !== 'object' ||
    parent.session.header === null ||
    !Array.isArray(parent.session.events)
  ) {
    throw new TypeError('subagent request parent must be an agent')
  }
  if (typeof prompt !== 'string' && !Array.isArray(prompt)) {
    throw new TypeError('subagent request prompt must be a string or an array of content blocks')
  }
  if (Array.isArray(prompt)) {
    for (let i = 0; i < prompt.length; i++) {
      const problem = contentBlockProblem(prompt[i])
      if (problem) throw new TypeError(`subagent request prompt block ${i} ${problem}`)
    }
  }
  const { label, persona, agentOptions, toolFilter } = request
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

/** Steps 1–4: shape, `maxDepth`, signal, parent and child depth. Throws the spec's errors. */
export function enter(
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
  const depth = parentDepth(parent.session.header.delegationDepth, parent.options.subagentDepth)
  return new StartPlan(request, seed ? 'fork' : 'spawn', depth, childDepth(depth), seed)
}

/** Steps 5–6, after `subagent/prepare` listeners had their say. */
export function admit(plan: StartPlan): void {
  assertWithinCap(plan.childDepth, plan.depthCap)
  const { request } = plan
  for (const field of capabilityFields) {
    if (request[field] === undefined) continue
    if (!plan.claims?.has(field)) throw new UnsupportedCapabilityError(field)
    plan.claims.get(field)?.()
  }
}
