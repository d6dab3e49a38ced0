/**
 * One tool execution, start to finish: resolve → parse → `tools/pre-execute` → guards → validate →
 * `tools/approve` → body → `tools/post-execute` → `tools/result`. Every path ends in exactly one `tools/result`.
 */
import { isThenable } from '../../../lib/async/thenable.ts'
import { newCallId } from '../../../lib/call-id.ts'
import { copyContent } from '../../../lib/content.ts'
import { type ErrorCode, thrownMessage as messageOf } from '../../../lib/errors.ts'
import { parseFrozenJson, toFrozenJson } from '../../../lib/json/frozen-json.ts'
import { formatInvalidArguments, jsonViolations } from '../../../lib/schema/json-validation.ts'
import { redactSecrets } from '../../../lib/text/redact.ts'
import type { Agent, ApprovalVerdict, ExecuteRequest, PreExecuteDecision, ToolCallBlock, ToolExecution, ToolGuard, ToolResult } from '../../../lib/types.ts'
import type { AgentScope, HookDispatcher, ScopedTool } from '../scope.ts'
import { type SignalSource, TurnSignalCarrier } from '../turn-signal.ts'

const neverAborted = new AbortController().signal

/** What one call runs against: its tool as the agent sees it, the agent's scope and guards. */
export interface PipelineContext {
  readonly tool: ScopedTool | undefined
  readonly scope: AgentScope | undefined
  readonly dispatcher: HookDispatcher
  readonly guards: readonly ToolGuard[]
}

/** An error result whose only content is exactly `Error: <message>`, URL credentials and bearer tokens redacted. */
export function errorResult(message: string, code: ErrorCode): ToolResult {
  return { isError: true, content: [{ type: 'text', text: `Error: ${redactSecrets(message)}` }], code }
}

function isToolResult(value: unknown): value is ToolResult {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as ToolResult).isError === 'boolean' &&
    Array.isArray((value as ToolResult).content)
  )
}

function render(value: unknown): string {
  if (typeof value === 'string') return value
  if (value === undefined) return ''
  return JSON.stringify(value)
}

/**
 * A `ToolResult`-shaped value as the session may record it: content blocks checked and copied, a
 * `value` as frozen JSON, a string `code`. Throws `TypeError` naming the first bad field.
 */
function checkedResult(result: ToolResult): ToolResult {
  // read once: the check that found a boolean may have read a getter (the loop records it unwalked)
  const isError = result.isError
  if (typeof isError !== 'boolean') throw new TypeError('tool result isError must be a boolean')
  const checked: ToolResult = { isError, content: copyContent(result.content, 'tool result content block') }
  if (result.value !== undefined) checked.value = toFrozenJson(result.value)
  if (result.code !== undefined) {
    if (typeof result.code !== 'string') throw new TypeError('tool result code must be a string')
    checked.code = result.code
  }
  return checked
}

/**
 * The final result frozen with its content, as `tools/result` observers are handed it and the
 * loop records it without another JSON-data walk: the hook is observe-only (SPEC §1.5), so no
 * listener can change what the session records after the checks (its `value` is frozen already).
 */
function sealed(result: ToolResult): ToolResult {
  const { content } = result
  for (let i = 0; i < content.length; i++) Object.freeze(content[i])
  Object.freeze(content)
  return Object.freeze(result)
}

/** Normalizes what a body returned into a `ToolResult`. */
function toResult(value: unknown): ToolResult {
  if (isToolResult(value)) return checkedResult(value)
  if (value === undefined) return { isError: false, content: [] }
  const json = toFrozenJson(value)
  return { isError: false, value: json, content: [{ type: 'text', text: render(json) }] }
}


/** A throwing body's result: its own `code` when it has one (a tool names its own codes), else `TOOL_FAILED`. */
function thrownResult(error: unknown): ToolResult {
  const result = errorResult(messageOf(error), 'TOOL_FAILED')
  const code = (error as { code?: unknown } | null)?.code
  if (typeof code === 'string') result.code = code
  return result
}

/** Arguments that could not be read, with the `INVALID_ARGS` message saying why. */
class UnreadableArguments {
  constructor(readonly message: string) {}
}

/** The call's arguments as deep-frozen JSON (`{}` for none), or why they could not be read. */
function parseArguments(raw: unknown): unknown {
  if (typeof raw !== 'string') {
    try {
      return toFrozenJson(raw === undefined ? {} : raw)
    } catch (error) {
      return new UnreadableArguments(formatInvalidArguments([messageOf(error)]))
    }
  }
  try {
    return raw.trim() === '' ? toFrozenJson({}) : parseFrozenJson(raw)
  } catch {
    return new UnreadableArguments(formatInvalidArguments(['arguments are not valid JSON']))
  }
}

/** The first guard's denial of `exec`, as an error result; `undefined` when every guard lets it run. */
function guardDenial(exec: ToolExecution, guards: readonly ToolGuard[]): ToolResult | undefined {
  for (const guard of guards) {
    let reason: string | undefined
    try {
      reason = guard(exec)
    } catch (error) {
      return errorResult(`tool guard failed: ${messageOf(error)}`, 'HOOK_FAILED')
    }
    if (typeof reason === 'string') return errorResult(reason, 'TOOL_DENIED')
  }
  return undefined
}

/**
 * The execution of a call the agent loop made: `signal` (see `TurnSignalCarrier`) comes after the
 * other keys, in `ToolExecution`'s order, and reads the turn's signal source on demand.
 */
class TurnCallExecution extends TurnSignalCarrier implements ToolExecution {
  // `declare`d fields, assigned in the constructor: see docs/performance.md, "Declared fields"
  declare readonly token: symbol
  declare readonly callId: string
  declare readonly name: string
  declare readonly args: unknown
  declare readonly agent: Agent
  /** Always `undefined`: the loop's calls are top level (a nested call goes through `execute`). */
  declare readonly parent: undefined

  constructor(token: symbol, callId: string, name: string, args: unknown, agent: Agent, source: SignalSource) {
    super(source)
    this.token = token
    this.callId = callId
    this.name = name
    this.args = args
    this.agent = agent
    this.parent = undefined
    this.defineSignal()
  }
}

/**
 * Runs one call of the public `execute` through the pipeline and reports its final outcome
 * (`tools/result`) once; its execution carries the request's signal, or one that never aborts.
 * Resolves with that result; rejects only for a fault of the pipeline itself, never for a tool's
 * or a listener's (those are error results).
 */
export function runRequest(request: ExecuteRequest, pipeline: PipelineContext): Promise<ToolResult> {
  try {
    const parsed = parseArguments(request.arguments)
    const exec: ToolExecution = Object.freeze({
      token: Symbol(request.name),
      callId: request.callId ?? newCallId(),
      name: request.name,
      args: parsed instanceof UnreadableArguments ? request.arguments : parsed,
      agent: request.agent,
      parent: request.parent,
      signal: request.signal ?? neverAborted,
    })
    return Promise.resolve(runExecution(exec, parsed, pipeline, false))
  } catch (error) {
    return Promise.reject(error)
  }
}

/**
 * `runRequest` for a call the agent loop made for `agent` (a block of the model's checked
 * response: its fields need no second check, and no request object is made for it). The
 * execution reads `source.signal` only when the tool reads `exec.signal`, so a call whose tool
 * never looks (a structured-output capture) costs no `AbortController`. The result itself, not a
 * promise, when the call met no promise on its way (see `runTool`).
 */
export function runTurnCall(
  call: ToolCallBlock,
  agent: Agent,
  source: SignalSource,
  pipeline: PipelineContext,
): ToolResult | Promise<ToolResult> {
  try {
    const parsed = parseArguments(call.arguments)
    const args = parsed instanceof UnreadableArguments ? call.arguments : parsed
    const exec: ToolExecution = Object.freeze(new TurnCallExecution(Symbol(call.name), call.id, call.name, args, agent, source))
    return runExecution(exec, parsed, pipeline, true)
  } catch (error) {
    return Promise.reject(error)
  }
}

/** The pipeline from `exec` on, given what `parseArguments` made of its arguments. */
function runExecution(exec: ToolExecution, parsed: unknown, pipeline: PipelineContext, eager: boolean): ToolResult | Promise<ToolResult> {
  const { tool } = pipeline
  const unreadable = parsed instanceof UnreadableArguments ? parsed : undefined
  // a call with a body to run reports its own outcome, in the same step as the body's result
  if (tool && !unreadable) return eager ? runToolEagerly(tool, exec, pipeline) : runTool(tool, exec, pipeline)
  // a call that never reaches a body still meets the guards first: once a guard closes the agent
  // (e.g. after a structured-output commit) every later call gets its reason
  const result =
    guardDenial(exec, pipeline.guards) ??
    (tool && unreadable ? errorResult(unreadable.message, 'INVALID_ARGS') : errorResult(`unknown tool "${exec.name}"`, 'UNKNOWN_TOOL'))
  return report(exec, pipeline, result)
}

/** Reports `result` as the call's final outcome (`tools/result`, frozen) and returns it. */
function report(exec: ToolExecution, pipeline: PipelineContext, result: ToolResult): ToolResult {
  pipeline.dispatcher.emit(pipeline.scope, 'tools/result', exec, sealed(result))
  return result
}

/**
 * `runTool` for a call of the agent loop, without a promise where nothing answers with one: with
 * no `tools/pre-execute` or `tools/approve` listener and a body that returns its result at once
 * (the structured-output capture), the call runs to its `tools/result` on the loop's stack and
 * returns the result itself. The loop runs a step's non-concurrent calls one after another anyway,
 * so no other call can start meanwhile. A nested call (`tools.execute`, Code Mode's bindings)
 * keeps `runTool`'s tick after its body: calls a program starts together are all in flight before
 * any of them reports.
 */
function runToolEagerly(tool: ScopedTool, exec: ToolExecution, pipeline: PipelineContext): ToolResult | Promise<ToolResult> {
  const { scope, dispatcher } = pipeline
  if (dispatcher.has('tools/pre-execute', scope) || dispatcher.has('tools/approve', scope)) return runTool(tool, exec, pipeline)
  const denial = guardDenial(exec, pipeline.guards) ?? argumentsDenial(tool, exec.args)
  if (denial) return report(exec, pipeline, denial)
  let returned: unknown
  try {
    returned = (tool.execute as (args: unknown, exec: ToolExecution) => unknown)(exec.args, exec)
  } catch (error) {
    return afterBody(exec, pipeline, thrownResult(error))
  }
  if (isThenable(returned)) return awaitBody(returned, exec, pipeline)
  let result: ToolResult
  try {
    result = toResult(returned)
  } catch (error) {
    result = thrownResult(error)
  }
  return afterBody(exec, pipeline, result)
}

/** The rest of an eager call whose body answered with a promise. */
async function awaitBody(returned: PromiseLike<unknown>, exec: ToolExecution, pipeline: PipelineContext): Promise<ToolResult> {
  let result: ToolResult
  try {
    result = toResult(await returned)
  } catch (error) {
    result = thrownResult(error)
  }
  const after = afterBody(exec, pipeline, result)
  return isThenable(after) ? await after : after
}

/** `tools/post-execute` over the body's result when anyone listens, then the report. */
function afterBody(exec: ToolExecution, pipeline: PipelineContext, body: ToolResult): ToolResult | Promise<ToolResult> {
  return pipeline.dispatcher.has('tools/post-execute', pipeline.scope) ? postExecute(exec, pipeline, body) : report(exec, pipeline, body)
}

async function postExecute(exec: ToolExecution, pipeline: PipelineContext, body: ToolResult): Promise<ToolResult> {
  let result: ToolResult
  try {
    const final = await pipeline.dispatcher.waterfallAsync<ToolResult>(pipeline.scope, 'tools/post-execute', [exec, body], () => body)
    // checked even when it is the body's own result: a listener may have changed that object
    // in place, and the loop records it without another JSON-data walk
    if (!isToolResult(final)) result = errorResult('tools/post-execute listener returned no result', 'HOOK_FAILED')
    else result = checkedResult(final)
  } catch (error) {
    result = errorResult(`tools/post-execute listener failed: ${messageOf(error)}`, 'HOOK_FAILED')
  }
  return report(exec, pipeline, result)
}

/**
 * `tools/pre-execute`, guards, argument validation, the body, `tools/post-execute`, then
 * `tools/result`: one async step per call, and no promise hop for a hook nobody listens to.
 */
async function runTool(tool: ScopedTool, exec: ToolExecution, pipeline: PipelineContext): Promise<ToolResult> {
  const { scope, dispatcher } = pipeline
  let result: ToolResult | undefined
  if (dispatcher.has('tools/pre-execute', scope)) {
    try {
      const decision = await dispatcher.waterfallAsync<PreExecuteDecision>(scope, 'tools/pre-execute', [exec], () => ({ kind: 'allow' }))
      if (decision?.kind === 'deny') result = errorResult(String(decision.reason), 'TOOL_DENIED')
    } catch (error) {
      result = errorResult(`tools/pre-execute listener failed: ${messageOf(error)}`, 'HOOK_FAILED')
    }
  }
  // guards run after the whole waterfall, so no listener can override them
  result ??= guardDenial(exec, pipeline.guards) ?? argumentsDenial(tool, exec.args)
  // asked last: a person is never asked about a call that would be refused anyway
  if (result === undefined && dispatcher.has('tools/approve', scope)) result = await approvalDenial(tool, exec, pipeline)
  if (result !== undefined) return report(exec, pipeline, result)
  try {
    result = toResult(await (tool.execute as (args: unknown, exec: ToolExecution) => unknown)(exec.args, exec))
  } catch (error) {
    result = thrownResult(error)
  }
  const after = afterBody(exec, pipeline, result)
  return isThenable(after) ? await after : after
}

/** The `tools/approve` verdict as an error result for a refused call, or `undefined` to run the body. */
async function approvalDenial(tool: ScopedTool, exec: ToolExecution, pipeline: PipelineContext): Promise<ToolResult | undefined> {
  let verdict: ApprovalVerdict | undefined
  try {
    verdict = await pipeline.dispatcher.waterfallAsync<ApprovalVerdict>(pipeline.scope, 'tools/approve', [exec, { readOnly: tool.readOnly }], allowed)
  } catch (error) {
    return errorResult(`tools/approve listener failed: ${messageOf(error)}`, 'HOOK_FAILED')
  }
  if (verdict?.kind !== 'deny') return undefined
  const code = typeof verdict.code === 'string' ? verdict.code : 'TOOL_DENIED'
  return errorResult(String(verdict.reason), code as ErrorCode)
}

const allowedVerdict: ApprovalVerdict = Object.freeze({ kind: 'allow' })
function allowed(): ApprovalVerdict {
  return allowedVerdict
}

/** The error result for arguments that break the tool's parameter schema, or `undefined`. */
function argumentsDenial(tool: ScopedTool, args: unknown): ToolResult | undefined {
  let violations: string[]
  try {
    violations = jsonViolations(tool.parameters, args)
  } catch (error) {
    return errorResult(`tool "${tool.name}" has unusable parameters: ${messageOf(error)}`, 'TOOL_FAILED')
  }
  return violations.length ? errorResult(formatInvalidArguments(violations), 'INVALID_ARGS') : undefined
}
