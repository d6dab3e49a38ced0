/**
 * The option checks of `agents.create`/`resume` (SPEC §1.3): plain copies, each field read once,
 * and frozen agent options.
 */
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

function isPositiveSafeInteger(value: unknown): boolean {
  return Number.isSafeInteger(value) && (value as number) > 0
}

const integerOptionKeys = ['maxTokens', 'maxSteps'] as const
const stringOptionKeys = ['provider', 'model'] as const

/** Validates and freezes agent options; throws `INVALID_OPTIONS` naming the field. */
export function freezeOptions(options: AgentOptions | undefined): Readonly<AgentOptions> {
  if (options === undefined) return Object.freeze({})
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new SubagentError('INVALID_OPTIONS', 'agent options must be an object')
  }
  // indexed loops over shared key lists: this runs on every creation, and a `for…of` over a
  // literal array builds the array and an iterator result per key until the JIT takes over
  for (let i = 0; i < integerOptionKeys.length; i++) {
    const key = integerOptionKeys[i]!
    if (options[key] !== undefined && !isPositiveSafeInteger(options[key])) {
      throw new SubagentError('INVALID_OPTIONS', `agent option ${key} must be a positive safe integer`)
    }
  }
  for (let i = 0; i < stringOptionKeys.length; i++) {
    const key = stringOptionKeys[i]!
    if (options[key] !== undefined && typeof options[key] !== 'string') {
      throw new SubagentError('INVALID_OPTIONS', `agent option ${key} must be a string`)
    }
  }
  return Object.freeze({ ...options })
}

const createOptionKeys = ['owner', 'sessionId', 'header', 'seed', 'agentOptions', 'signal', 'setup'] as const

/**
 * A plain copy of `create`/`resume` options, each field read once. Throws a `TypeError` naming the
 * field when the options are not an object or one of their getters throws.
 */
export function readCreateOptions(options: unknown, entry: 'create' | 'resume'): CreateOptions {
  if (options === undefined) return {}
  if (typeof options !== 'object' || options === null) throw new TypeError(`agent ${entry} options must be an object`)
  const copy: Record<string, unknown> = {}
  for (let i = 0; i < createOptionKeys.length; i++) {
    const key = createOptionKeys[i]!
    let value: unknown
    try {
      value = (options as Record<string, unknown>)[key]
    } catch (error) {
      throw new TypeError(`agent ${entry} options ${key} could not be read: ${thrownMessage(error)}`, { cause: error })
    }
    if (value !== undefined) copy[key] = value
  }
  return copy as CreateOptions
}
