/**
 * Error classes of the package. Every error of ours carries a stable `code` to route on; messages
 * are lowercase, quote the culprit and hold no secrets. `SubagentError.is` recognises errors from
 * any loaded copy of this package (a host may load `dist/` while tests load sources).
 */

const brand: unique symbol = Symbol.for('subagent-inprocess.error') as never

export type ErrorCode =
  | 'DEPTH_EXCEEDED'
  | 'UNSUPPORTED_CAPABILITY'
  | 'UNSUPPORTED_SCHEMA'
  | 'INVALID_ARGS'
  | 'UNKNOWN_TOOL'
  | 'TOOL_DENIED'
  | 'TOOL_FAILED'
  | 'MAX_STEPS'
  | 'NO_MODEL'
  | 'MODEL_FAILED'
  | 'DUPLICATE_TOOL'
  | 'INVALID_SESSION'
  | 'INVALID_OPTIONS'
  | 'CREATION_ABORTED'
  | 'AGENT_DISPOSED'
  | 'SESSION_FILE'
  | 'CONFIG'
  | 'SANDBOX'
  | 'BUDGET_EXHAUSTED'

/**
 * The message of any thrown value, for logs and error results. Never throws: a value whose message
 * or `String()` throws (e.g. `Object.create(null)`) becomes `unprintable thrown <type>`.
 */
export function thrownMessage(error: unknown): string {
  try {
    return error instanceof Error ? String(error.message) : String(error)
  } catch {
    return `unprintable thrown ${error === null ? 'null' : typeof error}`
  }
}

export class SubagentError extends Error {
  readonly [brand] = true
  override name = 'SubagentError'
  constructor(readonly code: ErrorCode | (string & {}), message: string, options?: ErrorOptions) {
    super(message, options)
  }

  /** True for an error from any loaded copy of this package. */
  static is(value: unknown): value is SubagentError {
    return typeof value === 'object' && value !== null && brand in value
  }
}

/** The child would be deeper than the effective cap (SPEC §2.1.5). */
export class SubagentDepthError extends SubagentError {
  override readonly name = 'SubagentDepthError'
  constructor(readonly attemptedDepth: number, readonly maxDepth: number) {
    super('DEPTH_EXCEEDED', `subagent depth ${attemptedDepth} exceeds maxDepth ${maxDepth}`)
  }
}

/** An `outputSchema` outside the supported subset; `violations` lists each with its path. */
export class UnsupportedSchemaError extends SubagentError {
  override readonly name = 'UnsupportedSchemaError'
  constructor(readonly violations: readonly string[]) {
    super('UNSUPPORTED_SCHEMA', `unsupported JSON schema: ${violations.join('; ')}`)
  }
}

/** A request field that no loaded plugin serves (SPEC §2.1.6). */
export class UnsupportedCapabilityError extends SubagentError {
  override readonly name = 'UnsupportedCapabilityError'
  constructor(readonly field: string) {
    super('UNSUPPORTED_CAPABILITY', `subagent runtime does not support the "${field}" capability`)
  }
}

/** The agent was disposed (or its creation rolled back): it takes no more input or registrations. */
export class AgentDisposedError extends SubagentError {
  override readonly name = 'AgentDisposedError'
  constructor(readonly agentId: string) {
    super('AGENT_DISPOSED', `agent "${agentId}" is disposed`)
  }
}

/** Which tree budget a start or a turn ran into (SPEC §9). */
export type BudgetLimit = 'children' | 'tokens' | 'modelRequests'

/**
 * A start that the tree budget (or the reservation the parent lives under) cannot pay for
 * (SPEC §9). Raised before anything is created.
 */
export class SubagentBudgetError extends SubagentError {
  override readonly name = 'SubagentBudgetError'
  constructor(readonly limit: BudgetLimit, readonly used: number, readonly max: number) {
    super('BUDGET_EXHAUSTED', `subagent budget exhausted: ${limit} ${used} of ${max}`)
  }
}

/** The rejection of a start aborted before its child was published (SPEC §2.1, §9 queue). */
export const abortedBeforePublication = 'subagent request was aborted before child publication'
