/**
 * The synchronous entry of `start` (SPEC §2.1), top to bottom in `enter`: the request is read once
 * (`snapshotRequest`), then every check runs on that snapshot before the first await, in the
 * spec's order, and none touches `parent.ctx`.
 */
import type { Listener } from '../../lib/dispatch.ts'
import { assertMaxDepth, assertWithinCap, childDepth, lowerCap, parentDepth } from '../../lib/delegation/depth.ts'
import { abortedBeforePublication, SubagentError, thrownMessage, UnsupportedCapabilityError } from '../../lib/errors.ts'
import { type RecordedHeaderField, recordedHeaderValue } from '../../lib/session/session-header.ts'
import type { ApprovalPolicy, RunTicket, SessionEvent, SubagentBaseline, SubagentPlan, SubagentStartOptions, SubagentStartRequest, ToolGuard, Usage } from '../../lib/types.ts'
import { flatUuid } from '../../lib/uuid.ts'
import type { Dispatch } from '../../cordis-glue/bridge.ts'
import { listenersOf, type Tools } from '../host/index.ts'
import { capabilityFields, type ParentSnapshot, type RequestSnapshot, snapshotRequest, unreadable } from './request-snapshot.ts'
import { mergeBaseline } from './baseline.ts'

export { abortedBeforePublication, capabilityFields }

/** What the entry asks of the host: the hooks it emits and the parent's tools (for inheritance). */
export interface EntryHost {
  readonly dispatch: Dispatch
  readonly tools: Tools
}

/** `fork`'s seed source: the parent's events through its last `turn/end`, taken from the snapshot. */
export const FORK = Symbol('fork')

/**
 * SPEC §2.1 steps 0–6 and §8.3, in order: the snapshot and its shape (0), `maxDepth` (1), the
 * signal (2), parent and child depth (3–4), the `subagent/prepare` hook, the depth cap (5), the
 * capabilities (6), then the inherited restrictions. Returns the plan admission and creation use;
 * throws the spec's errors (nothing is created, no agent is touched beyond reading it).
 */
export function enter(request: SubagentStartRequest, seed: readonly SessionEvent[] | typeof FORK | undefined, host: EntryHost): StartPlan {
  const snapshot = snapshotRequest(request)
  const forkSeed = seed === FORK ? seedOf(snapshot.parent.events) : seed
  const plan = planOf(snapshot, forkSeed)
  const { dispatch } = host
  if (dispatch.has('subagent/define')) define(plan, dispatch)
  if (dispatch.has('subagent/prepare')) dispatch.emitStrict('subagent/prepare', [plan])
  assertWithinCap(plan.childDepth, plan.depthCap)
  checkCapabilities(plan)
  if (plan.request.inheritRestrictions) inheritRestrictions(plan, host.tools)
  return plan
}

/** `subagent/define` (SPEC §12): the only window in which a listener may set the plan's baseline. */
function define(plan: StartPlan, dispatch: Dispatch): void {
  plan.isDefining = true
  try {
    dispatch.emitStrict('subagent/define', [plan])
  } finally {
    plan.isDefining = false
  }
}

/** Steps 1–4 on the snapshot: `maxDepth`, the signal, parent and child depth; the plan. */
function planOf(snapshot: RequestSnapshot, seed: readonly SessionEvent[] | undefined): StartPlan {
  const { request, parent } = snapshot
  assertMaxDepth(request.maxDepth)
  const { signal } = request
  if (!(signal instanceof AbortSignal)) throw new TypeError('subagent request signal must be an AbortSignal')
  if (signal.aborted) throw new SubagentError('ABORTED', abortedBeforePublication, { cause: signal.reason })
  const depth = parentDepth(parent.headerDepth, parent.runtimeDepth)
  return new StartPlan(snapshot, seed ? 'fork' : 'spawn', depth, childDepth(depth), seed)
}

/**
 * The seed of a fork: the parent's events through its last `turn/end` (empty without one), each
 * entry read once. Throws a `TypeError` naming the entry that is not an event object, or whose
 * `type` getter throws.
 */
function seedOf(events: readonly unknown[]): readonly SessionEvent[] {
  const seen: SessionEvent[] = new Array(events.length)
  let end = 0
  for (let i = 0; i < events.length; i++) {
    const event: unknown = events[i]
    let type: unknown
    if (typeof event === 'object' && event !== null) {
      try {
        type = (event as { type?: unknown }).type
      } catch (error) {
        throw unreadable(`parent.session.events[${i}].type`, error)
      }
    }
    if (typeof type !== 'string') throw new TypeError(`subagent request parent.session.events[${i}] must be a session event`)
    seen[i] = event as SessionEvent
    if (type === 'turn/end') end = i + 1
  }
  seen.length = end
  return Object.freeze(seen)
}

/** The `seed` of `start`'s options; a `TypeError` naming the field for options that cannot be read. */
export function readStartSeed(options: SubagentStartOptions | undefined): readonly SessionEvent[] | undefined {
  if (options === undefined) return undefined
  if (typeof options !== 'object' || options === null) throw new TypeError('subagent start options must be an object')
  try {
    return options.seed
  } catch (error) {
    throw new TypeError(`subagent start options seed could not be read: ${thrownMessage(error)}`, { cause: error })
  }
}

/** A plan whose depth cap only goes down. */
export class StartPlan implements SubagentPlan {
  // `declare`d fields, assigned in the constructor: see docs/performance.md, "Declared fields"
  /** The request as the entry read it, once: a frozen plain copy whose `parent` is the agent. */
  declare readonly request: Readonly<SubagentStartRequest>
  /** What the entry read of the parent, once: creation takes the child's header and options from it. */
  declare readonly parent: ParentSnapshot
  declare readonly mode: 'spawn' | 'fork'
  declare readonly parentDepth: number
  declare readonly childDepth: number
  declare readonly seed: readonly SessionEvent[] | undefined
  /** The child's id for its whole life: one flat string, not the rope randomUUID() returns. */
  declare readonly childId: string
  /** `request.signal` as step 2 checked it. */
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
  #baseline: Readonly<SubagentBaseline> | undefined
  /** True only while `subagent/define` listeners run: the one place a baseline may be set. */
  declare isDefining?: boolean
  #recorded: { agent?: string; approval?: ApprovalPolicy } | undefined
  #ticket: RunTicket | undefined
  #moreTickets: RunTicket[] | undefined

  constructor(
    snapshot: RequestSnapshot,
    mode: 'spawn' | 'fork',
    parentDepth: number,
    childDepth: number,
    seed: readonly SessionEvent[] | undefined,
  ) {
    const { request } = snapshot
    this.request = request
    this.parent = snapshot.parent
    this.signal = request.signal
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

  get baseline(): Readonly<SubagentBaseline> | undefined {
    return this.#baseline
  }

  setBaseline(fields: SubagentBaseline): void {
    if (!this.isDefining) throw new TypeError('plan.setBaseline may only be called by a "subagent/define" listener')
    const next = mergeBaseline(this.#baseline, fields)
    if (next.maxDepth !== undefined) this.capDepth(next.maxDepth)
    this.#baseline = next
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

/** Step 6: every capability field set (by the request or a definition's baseline) is claimed, and its claim's validator passes. */
function checkCapabilities(plan: StartPlan): void {
  const { request, baseline } = plan
  // a definition named by no loaded plugin: nothing set a baseline for it
  if (request.agent !== undefined && baseline === undefined) throw new UnsupportedCapabilityError('agent')
  for (let i = 0; i < capabilityFields.length; i++) {
    const field = capabilityFields[i]
    if (request[field] === undefined && baseline?.[field] === undefined) continue
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
function inheritRestrictions(plan: StartPlan, tools: Tools): void {
  const parent = plan.parent.agent
  const parentTools = tools.visibleGlobals(parent)
  const visible = new Set(parentTools)
  for (const name of plan.request.toolFilter?.allow ?? []) {
    if (!visible.has(name)) throw new TypeError(`subagent tool "${name}" is not available to the parent`)
  }
  plan.inheritedTools = parentTools
  plan.inheritedGuards = tools.guardsOf(parent)
  plan.inheritedPreExecute = listenersOf(parent, 'tools/pre-execute') as readonly Listener[]
}
