/**
 * Tools (SPEC §1.5).
 */
import type { Agent } from './agent.ts'
import type { ContentBlock } from './content.ts'
import type { JsonSchema } from './json.ts'

export interface ToolResult {
  isError: boolean
  content: ContentBlock[]
  value?: unknown
  code?: string
}

/** One tool call in flight. The same object reaches the body, every hook and `tools/result`. */
export interface ToolExecution {
  readonly token: symbol
  readonly callId: string
  readonly name: string
  readonly args: unknown
  readonly agent?: Agent
  /** Token of the enclosing execution (Code Mode), if any. */
  readonly parent?: symbol
  readonly signal: AbortSignal
}

export interface ToolDefinition {
  name: string
  description: string
  /** An object JSON Schema; arguments are validated against it before `execute` runs. */
  parameters: JsonSchema
  /**
   * May run at the same time as its neighbours in one model step (SPEC §8.1); default `false`. A
   * call to a tool without it waits for every earlier call of the step and holds back every later one.
   */
  concurrent?: boolean
  /**
   * The tool only reads: approval policies decide its calls with their `readOnly` field (SPEC
   * §11.1). Default `false`.
   */
  readOnly?: boolean
  /**
   * Runs the tool. A thrown error becomes an error result. A returned `ToolResult`-shaped object
   * (`{isError, content}`) is used as is; any other value becomes `{isError: false, value, content}`.
   */
  execute(args: never, exec: ToolExecution): unknown
  /**
   * Asked each time the agent's tools are listed, looked up or executed: `false` hides the tool
   * from that agent (schemas, lookup, execution — `unknown tool "<name>"` — and Code Mode
   * bindings). A throw counts as `false`. Absent: always available.
   */
  available?(agent: Agent): boolean
}

export interface ToolSchema { name: string; description: string; parameters: JsonSchema }

export interface ExecuteRequest {
  name: string
  arguments: unknown
  callId?: string
  agent?: Agent
  parent?: symbol
  signal?: AbortSignal
}

export type PreExecuteDecision = { kind: 'allow' } | { kind: 'deny'; reason: string }

/** What the host's approval point (`tools/approve`) tells a listener about the tool called. */
export interface ApprovalSubject {
  /** `ToolDefinition.readOnly` of the tool as the calling agent sees it. */
  readonly readOnly: boolean
}

/**
 * A `tools/approve` answer: run the body, or refuse the call with the error result
 * `Error: <reason>` and `code` (default `TOOL_DENIED`).
 */
export type ApprovalVerdict = { kind: 'allow' } | { kind: 'deny'; reason: string; code?: string }

/** A guard returns a reason string to deny the call, or `undefined` to let it run. */
export type ToolGuard = (exec: ToolExecution) => string | undefined
