/**
 * The option checks of `agents.create`/`resume` (SPEC §1.3): plain copies, each field read once,
 * and frozen agent options.
 */
import { approvalPolicyProblems, readApprovalPolicy } from '../../../lib/approval/policy.ts'
import { SubagentError, thrownMessage } from '../../../lib/errors.ts'
import type { Agent, AgentOptions, CreateAgentOptions } from '../../../lib/types.ts'

/** `create` options plus the host's extension: an explicit owner agent. */
export interface CreateOptions extends CreateAgentOptions {
  /**
   * The agent that owns the new one, exactly as if `owner.ctx.agents.create()` had been called:
   * disposing the owner disposes it. Defaults to the agent whose context makes the call.
   */
  owner?: Agent
}

/**
 * Validates and freezes a copy of agent options; throws `INVALID_OPTIONS` naming the field. The
 * copy is made first and checked: every field is read once, and what is checked is what is kept.
 */
export function freezeOptions(options: AgentOptions | undefined): Readonly<AgentOptions> {
  if (options === undefined) return Object.freeze({})
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new SubagentError('INVALID_OPTIONS', 'agent options must be an object')
  }
  const copy = { ...options }
  // named checks, not a loop over key names: every creation runs them, and named reads of one
  // shape stay cheap in the baseline code the first few thousand creations run as
  assertPositiveSafeInteger(copy.maxTokens, 'maxTokens')
  assertPositiveSafeInteger(copy.maxSteps, 'maxSteps')
  assertOptionalString(copy.provider, 'provider')
  assertOptionalString(copy.model, 'model')
  // kept as a frozen copy: a policy changed in place after the start must not loosen the guard
  if (copy.approval !== undefined) copy.approval = checkedApproval(copy.approval)
  return Object.freeze(copy)
}

/** `approval` (SPEC §11.1) as a frozen policy; `INVALID_OPTIONS` listing every problem. */
function checkedApproval(value: unknown): AgentOptions['approval'] {
  const problems = approvalPolicyProblems(value, 'agent option approval')
  if (problems.length) throw new SubagentError('INVALID_OPTIONS', problems.join('; '))
  return readApprovalPolicy(value, 'agent option approval')
}

function assertPositiveSafeInteger(value: unknown, key: 'maxTokens' | 'maxSteps'): void {
  if (value !== undefined && !(Number.isSafeInteger(value) && (value as number) > 0)) {
    throw new SubagentError('INVALID_OPTIONS', `agent option ${key} must be a positive safe integer`)
  }
}

function assertOptionalString(value: unknown, key: 'provider' | 'model'): void {
  if (value !== undefined && typeof value !== 'string') {
    throw new SubagentError('INVALID_OPTIONS', `agent option ${key} must be a string`)
  }
}

type CreateOptionKey = 'owner' | 'sessionId' | 'header' | 'seed' | 'agentOptions' | 'signal' | 'setup'

/**
 * A plain copy of `create`/`resume` options, each field read once. Throws a `TypeError` naming the
 * field when the options are not an object or one of their getters throws.
 */
export function readCreateOptions(options: unknown, entry: 'create' | 'resume'): CreateOptions {
  if (options === undefined) return {}
  if (typeof options !== 'object' || options === null) throw new TypeError(`agent ${entry} options must be an object`)
  const from = options as CreateOptions
  // named reads into one literal, not a loop over key names: the copy has one shape whatever was
  // set, so every read of it downstream stays monomorphic; `key` names a getter that throws
  let key: CreateOptionKey = 'owner'
  try {
    const owner = from.owner
    key = 'sessionId'; const sessionId = from.sessionId
    key = 'header'; const header = from.header
    key = 'seed'; const seed = from.seed
    key = 'agentOptions'; const agentOptions = from.agentOptions
    key = 'signal'; const signal = from.signal
    key = 'setup'; const setup = from.setup
    return { owner, sessionId, header, seed, agentOptions, signal, setup }
  } catch (error) {
    throw new TypeError(`agent ${entry} options ${key} could not be read: ${thrownMessage(error)}`, { cause: error })
  }
}
