/**
 * Error classes of the package. Every error of ours carries a stable `code` to route on; messages
 * are lowercase, quote the culprit and hold no secrets. `SubagentError.is` recognises errors from
 * any loaded copy of this package (a host may load `dist/` while tests load sources).
 */

const brand: unique symbol = Symbol.for('subagent-inprocess.error') as never

/**
 * Every code this package puts on an error: on a thrown `SubagentError`, on a turn-end error, on a
 * tool error result. Closed: a new code is added here and to the taxonomy table of docs/host-api.md.
 */
export const ERROR_CODES = Object.freeze([
  // thrown: checks before a child exists
  'DEPTH_EXCEEDED',
  'UNSUPPORTED_CAPABILITY',
  'UNSUPPORTED_SCHEMA',
  'BUDGET_EXHAUSTED',
  'ABORTED',
  'NO_CALLING_AGENT',
  'INVALID_AGENT_DEFINITION',
  'NOT_PENDING',
  // thrown: the host's registries, sessions and agents
  'INVALID_OPTIONS',
  'INVALID_SESSION',
  'CREATION_ABORTED',
  'AGENT_DISPOSED',
  'DUPLICATE_TOOL',
  'HOOK_MISUSE',
  'FOLLOWUP_FAILED',
  'DISPOSED',
  // thrown: models, files, configuration, the package itself
  'MODEL_FAILED',
  'CONTENT_FILTERED',
  'SCRIPT_EXHAUSTED',
  'SESSION_FILE',
  'SESSION_STORE',
  'TREE_LEASED',
  'CONFIG',
  'SANDBOX',
  'PEER_DEPENDENCY',
  'MISSING_TEXT',
  'LOCALE_FILE',
  // turn-end errors (`{kind: 'error', error: {message, code}}`)
  'MAX_STEPS',
  'NO_MODEL',
  // tool error results (`ToolResult.code`); a tool's own thrown code passes through as it is
  'INVALID_ARGS',
  'UNKNOWN_TOOL',
  'TOOL_DENIED',
  'DENIED',
  'TOOL_FAILED',
  'HOOK_FAILED',
  'NOT_RECORDED',
  'SUBAGENT_CANCELLED',
  'SUBAGENT_FAILED',
  'SUBAGENT_MAX_TOKENS',
  'SUBAGENT_DECLINED',
  'SUBAGENT_BUDGET',
  'MCP_TIMEOUT',
  'MCP_FAILED',
] as const)

export type ErrorCode = (typeof ERROR_CODES)[number]

/** True for one of `ERROR_CODES`. */
export function isErrorCode(value: unknown): value is ErrorCode {
  return (ERROR_CODES as readonly unknown[]).includes(value)
}

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

/**
 * The base of every error this package throws for a fault (argument checks throw the built-in
 * `TypeError`/`RangeError` SPEC names). Route on `code`, never on `message`.
 */
export class SubagentError extends Error {
  readonly [brand] = true
  override name = 'SubagentError'
  constructor(readonly code: ErrorCode, message: string, options?: ErrorOptions) {
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

/** A component (the sandbox pool, the loader) was used after its disposal. */
export class DisposedError extends SubagentError {
  override readonly name = 'DisposedError'
  /** `what`: the component, as the message names it (`the sandbox pool`). */
  constructor(readonly what: string) {
    super('DISPOSED', `${what} is disposed`)
  }
}

/** A hook listener broke the hook's protocol (e.g. called `next()` twice). */
export class HookMisuseError extends SubagentError {
  override readonly name = 'HookMisuseError'
  constructor(readonly hook: string, message: string) {
    super('HOOK_MISUSE', message)
  }
}
