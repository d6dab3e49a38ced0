/**
 * SPEC §2.1 step 0: the request as the start reads it, once. Every field of the caller's object
 * (and every field of its parent the start needs) is read exactly once, here, and plain data is
 * copied and frozen; the checks and everything after them use only this snapshot, so a getter
 * can never show a check one value and the creation another.
 */
import { approvalPolicyProblems } from '../../lib/approval/policy.ts'
import { copyContent } from '../../lib/content.ts'
import { thrownMessage } from '../../lib/errors.ts'
import { PlainCopies, plainCopy } from '../../lib/json/plain-copy.ts'
import type { Agent, AgentOptions, ApprovalPolicy, ContentBlock, SubagentStartRequest } from '../../lib/types.ts'

// a caller reuses one schema object for its starts: the same copy each time keeps the schema's
// checks and compiled validator (cached per schema object by the plugin that serves it) from
// running again on every start
const schemaCopies = new PlainCopies()

/** Request fields that only a plugin can serve: unclaimed, they reject the start (step 6). */
export const capabilityFields = ['outputSchema', 'budget', 'approval'] as const

/** What the start reads of its parent, at entry, once each. */
export interface ParentSnapshot {
  /** The agent itself: the child's owner, and what hooks and tool lookups are asked about. */
  readonly agent: Agent
  readonly id: string
  /** `session.header.delegationDepth`, unchecked (step 3 checks it). */
  readonly headerDepth: number | undefined
  /** `options.subagentDepth`, unchecked (step 3 checks it). */
  readonly runtimeDepth: unknown
  readonly cwd: string | undefined
  /** The parent's `provider`, `model` and `maxTokens` as the child inherits them (SPEC §2.2). */
  readonly inherited: Readonly<AgentOptions>
  readonly events: readonly unknown[]
}

/** The snapshot: the request as a frozen plain copy (its `parent` is the agent), and the parent's fields. */
export interface RequestSnapshot {
  readonly request: Readonly<SubagentStartRequest>
  readonly parent: ParentSnapshot
}

/**
 * The `TypeError` for a field whose getter threw: a hostile or half-built request must reject the
 * start with the field's name, not a bare runtime message.
 */
export function unreadable(path: string, error: unknown): TypeError {
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

function isRecord(value: unknown): value is Record<string, unknown> {
  return isObject(value) && !Array.isArray(value)
}

const notAgent = (): TypeError => new TypeError('subagent request parent must be an agent')

/** The parent's fields, each read once; `subagent request parent must be an agent` unless it is agent-shaped. */
function snapshotParent(value: unknown): ParentSnapshot {
  if (!isObject(value)) throw notAgent()
  const id = readField(value, 'id', 'parent.id')
  if (typeof id !== 'string') throw notAgent()
  if (typeof readField(value, 'followup', 'parent.followup') !== 'function') throw notAgent()
  const options = readField(value, 'options', 'parent.options')
  if (!isObject(options)) throw notAgent()
  const session = readField(value, 'session', 'parent.session')
  if (!isObject(session)) throw notAgent()
  const header = readField(session, 'header', 'parent.session.header')
  if (!isObject(header)) throw notAgent()
  const events = readField(session, 'events', 'parent.session.events')
  if (!Array.isArray(events)) throw notAgent()
  const headerDepth = readField(header, 'delegationDepth', 'parent.session.header.delegationDepth') as number | undefined
  const runtimeDepth = readField(options, 'subagentDepth', 'parent.options.subagentDepth')
  const cwd = readField(header, 'cwd', 'parent.session.header.cwd') as string | undefined
  const inherited: AgentOptions = {}
  for (const key of INHERITED_OPTIONS) {
    const option = readField(options, key, `parent.options.${key}`)
    if (option !== undefined) inherited[key] = option as never
  }
  return { agent: value as Agent, id, headerDepth, runtimeDepth, cwd, inherited, events }
}

/** What a child inherits of its parent's options (SPEC §2.2), in this order. */
const INHERITED_OPTIONS = ['provider', 'model', 'maxTokens'] as const

function checkToolFilter(value: unknown): SubagentStartRequest['toolFilter'] {
  if (!isRecord(value)) throw new TypeError('subagent request toolFilter must be an object')
  const copy = plainCopy(value, 'subagent request toolFilter')
  for (const key of ['allow', 'deny'] as const) {
    const names = copy[key]
    if (names !== undefined && (!Array.isArray(names) || names.some((name) => typeof name !== 'string'))) {
      throw new TypeError(`subagent request toolFilter.${key} must be an array of tool names`)
    }
  }
  return copy as SubagentStartRequest['toolFilter']
}

/** Step 0 for `approval` (SPEC §11.1 shape): a `TypeError` listing every problem. */
function assertApprovalPolicy(value: unknown): void {
  const problems = approvalPolicyProblems(value, 'subagent request approval')
  if (problems.length) throw new TypeError(problems.join('; '))
}

/**
 * Reads `request` once and checks the shape of what the driver itself serves (SPEC §2.1 step 0),
 * in the spec's order. A capability field is copied; `outputSchema` and `budget` are checked by
 * the plugin that serves them, at `subagent/prepare`; `approval`'s public shape is checked here. `maxDepth` and `signal` are read here and
 * checked by steps 1–2. Throws `TypeError` `subagent request <field> must be …`, or
 * `subagent request <path> could not be read: <reason>` for a getter that throws.
 */
export function snapshotRequest(request: SubagentStartRequest): RequestSnapshot {
  if (!isObject(request)) throw new TypeError('subagent request must be an object')
  const parent = snapshotParent(readField(request, 'parent', 'parent'))
  const prompt = readField(request, 'prompt', 'prompt')
  let promptCopy: string | ContentBlock[]
  if (typeof prompt === 'string') promptCopy = prompt
  else if (Array.isArray(prompt)) promptCopy = copyContent(prompt, 'subagent request prompt block')
  else throw new TypeError('subagent request prompt must be a string or an array of content blocks')
  const snapshot: SubagentStartRequest = {
    parent: parent.agent,
    prompt: promptCopy,
    signal: readField(request, 'signal', 'signal') as AbortSignal,
  }
  const inheritRestrictions = readField(request, 'inheritRestrictions', 'inheritRestrictions')
  if (inheritRestrictions !== undefined) {
    if (typeof inheritRestrictions !== 'boolean') throw new TypeError('subagent request inheritRestrictions must be a boolean')
    snapshot.inheritRestrictions = inheritRestrictions
  }
  for (const field of ['label', 'persona', 'callId', 'agent'] as const) {
    const value = readField(request, field, field)
    if (value === undefined) continue
    if (typeof value !== 'string') throw new TypeError(`subagent request ${field} must be a string`)
    snapshot[field] = value
  }
  // a policy's shape is public (SPEC §11.1): its copy is checked here, whether or not `Approvals` serves it
  const approval = plainCopy(readField(request, 'approval', 'approval'), 'subagent request approval')
  if (approval !== undefined) assertApprovalPolicy(approval)
  const agentOptions = readField(request, 'agentOptions', 'agentOptions')
  if (agentOptions !== undefined) {
    if (!isRecord(agentOptions)) throw new TypeError('subagent request agentOptions must be an object')
    snapshot.agentOptions = plainCopy(agentOptions, 'subagent request agentOptions')
  }
  const toolFilter = readField(request, 'toolFilter', 'toolFilter')
  if (toolFilter !== undefined) snapshot.toolFilter = checkToolFilter(toolFilter)
  const execution = readField(request, 'execution', 'execution')
  if (execution !== undefined) {
    if (typeof execution !== 'symbol') throw new TypeError('subagent request execution must be an execution token (a symbol)')
    snapshot.execution = execution
  }
  const maxDepth = readField(request, 'maxDepth', 'maxDepth')
  if (maxDepth !== undefined) snapshot.maxDepth = maxDepth as number
  if (approval !== undefined) snapshot.approval = approval as ApprovalPolicy
  const outputSchema = readField(request, 'outputSchema', 'outputSchema')
  if (outputSchema !== undefined) snapshot.outputSchema = schemaCopies.copy(outputSchema, 'subagent request outputSchema') as never
  const budget = readField(request, 'budget', 'budget')
  if (budget !== undefined) snapshot.budget = plainCopy(budget, 'subagent request budget') as never
  return { request: Object.freeze(snapshot), parent }
}
