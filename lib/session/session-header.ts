/**
 * The session header rule (SPEC §1.2), shared by the host's sessions and the session files that
 * load a header back. Pure: no cordis, no I/O.
 */
import { type ApprovalPolicy, approvalPolicyProblems, readApprovalPolicy } from '../approval/policy.ts'
import { isNonNegativeSafeInteger } from '../delegation/depth.ts'
import { SubagentError } from '../errors.ts'
import { jsonDataViolation } from '../json/json-data.ts'
import type { SessionHeader } from '../types.ts'

/** What a definition name (SPEC §12), and so a header's `agent`, looks like. */
export const AGENT_NAME = /^[a-z][a-z0-9-]{0,63}$/

/** `value` when it is a string; else throws `session header <key> must be a string`. */
function checkedString(value: unknown, key: 'cwd' | 'parentSession' | 'label' | 'callId'): string {
  if (typeof value !== 'string') throw new SubagentError('INVALID_SESSION', `session header ${key} must be a string`)
  return value
}

/** `value` when it is a non-negative safe integer; else throws naming `key`. */
function checkedDepth(value: unknown, key: 'delegationDepth' | 'seedLength'): number {
  if (!isNonNegativeSafeInteger(value)) {
    throw new SubagentError('INVALID_SESSION', `session header ${key} must be a non-negative safe integer`)
  }
  return value
}

/** The header fields a start plan may record for its child (`SubagentPlan.recordHeader`). */
export type RecordedHeaderField = 'agent' | 'approval'

/**
 * `value` checked as the child's header `field`, as it will be stored (an approval policy as a
 * frozen copy). Throws a `TypeError` `subagent header <field> …` naming the problem, and for a
 * field other than `agent` and `approval`.
 */
export function recordedHeaderValue(field: RecordedHeaderField, value: unknown): string | ApprovalPolicy {
  if (field === 'approval') return readApprovalPolicy(value, 'subagent header approval')
  if (field === 'agent') {
    if (typeof value !== 'string' || !AGENT_NAME.test(value)) {
      throw new TypeError(`subagent header agent must be a definition name matching ${AGENT_NAME}`)
    }
    return value
  }
  throw new TypeError(`subagent header field ${JSON.stringify(field)} cannot be recorded (only "agent" and "approval")`)
}

/** A header's `approval` as a frozen policy; `INVALID_SESSION` listing every problem of a malformed one. */
function headerApproval(value: unknown): SessionHeader['approval'] {
  const problems = approvalPolicyProblems(value, 'session header approval')
  if (problems.length) throw new SubagentError('INVALID_SESSION', problems.join('; '))
  return readApprovalPolicy(value, 'session header approval')
}

/**
 * Builds a frozen header, rejecting malformed fields with
 * `session header <field> must be a non-negative safe integer` (and similar for strings). Each
 * field is read once, and checked in the order of the header's keys.
 */
export function buildHeader(fields: Record<string, unknown>): SessionHeader {
  const { id, createdAt } = fields
  if (typeof id !== 'string' || !id) {
    throw new SubagentError('INVALID_SESSION', 'session header id must be a non-empty string')
  }
  if (typeof createdAt !== 'number' || !Number.isFinite(createdAt)) {
    throw new SubagentError('INVALID_SESSION', 'session header createdAt must be a finite number')
  }
  const header: Partial<Record<keyof SessionHeader, unknown>> = { id, createdAt }
  // named reads and writes, not a loop over key names: a loop makes each a keyed access on a
  // varying key, and adding a property through one goes to V8's runtime, in baseline and in
  // optimized code alike (every creation builds a header)
  const { cwd, parentSession, label, callId, origin, delegationDepth, seedLength, agent, approval, agentOptions } = fields
  if (cwd !== undefined) header.cwd = checkedString(cwd, 'cwd')
  if (parentSession !== undefined) header.parentSession = checkedString(parentSession, 'parentSession')
  if (label !== undefined) header.label = checkedString(label, 'label')
  if (callId !== undefined) header.callId = checkedString(callId, 'callId')
  if (origin !== undefined) {
    if (origin !== 'subagent') throw new SubagentError('INVALID_SESSION', 'session header origin must be "subagent"')
    header.origin = origin
  }
  if (delegationDepth !== undefined) header.delegationDepth = checkedDepth(delegationDepth, 'delegationDepth')
  if (seedLength !== undefined) header.seedLength = checkedDepth(seedLength, 'seedLength')
  if (agent !== undefined) {
    if (typeof agent !== 'string' || !AGENT_NAME.test(agent)) {
      throw new SubagentError('INVALID_SESSION', `session header agent must be a definition name matching ${AGENT_NAME}`)
    }
    header.agent = agent
  }
  if (approval !== undefined) header.approval = headerApproval(approval)
  if (agentOptions !== undefined) {
    if (!isJsonObject(agentOptions)) throw new SubagentError('INVALID_SESSION', 'session header agentOptions must be a JSON object')
    header.agentOptions = agentOptions
  }
  return Object.freeze(header) as SessionHeader
}

/** A plain object (not an array) holding JSON data only: what `agentOptions` may be. */
function isJsonObject(value: unknown): value is SessionHeader['agentOptions'] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const proto: unknown = Object.getPrototypeOf(value)
  return (proto === Object.prototype || proto === null) && jsonDataViolation(value) === undefined
}
