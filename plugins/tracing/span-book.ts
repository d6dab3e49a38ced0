/**
 * The open spans of one `Tracing` instance, keyed by what identifies them under concurrency: a
 * run by its id, a root agent's turn by the agent id, a model request by the agent id (an agent
 * sends one at a time), a tool execution by its `ToolExecution.token` (a run started by a tool
 * finds its tool's span by that token, `SubagentInfo.execution`: call ids need not be unique).
 * Never "the current span".
 */
import { type Attributes, type Context as TraceContext, context, type Span, SpanKind, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api'
import type { SubagentInfo, ToolExecution, ToolResult, TurnEndReason, Usage } from '../../lib/types.ts'

/** Attribute names: the OpenTelemetry GenAI semantic conventions plus this project's `subagent.*`. */
export const attributes = {
  operation: 'gen_ai.operation.name',
  provider: 'gen_ai.provider.name',
  agentId: 'gen_ai.agent.id',
  agentName: 'gen_ai.agent.name',
  requestModel: 'gen_ai.request.model',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  depth: 'subagent.depth',
  mode: 'subagent.mode',
  /** The agent definition the child was started from (SPEC §12). */
  agent: 'subagent.agent',
  stopReason: 'subagent.stop_reason',
  rootId: 'subagent.root_id',
  turnEnd: 'subagent.turn_end',
  unfinished: 'subagent.unfinished',
} as const

/** Why a span was ended by `closeAll` instead of by its own event. */
export const UNFINISHED_REASON = 'tracing stopped before the span ended'


function setUsage(span: Span, usage: Usage | undefined): void {
  if (!usage) return
  span.setAttribute(attributes.inputTokens, usage.inputTokens)
  span.setAttribute(attributes.outputTokens, usage.outputTokens)
}

function turnEndMessage(reason: TurnEndReason): string {
  return reason.kind === 'error' ? reason.error.message : reason.kind
}

export class SpanBook {
  readonly #runs = new Map<string, Span>()
  readonly #turns = new Map<string, Span>()
  readonly #chats = new Map<string, Span>()
  readonly #tools = new Map<symbol, Span>()

  constructor(private tracer: Tracer) {}

  /** Starts every later span on `tracer`; spans already open keep theirs and end as usual. */
  useTracer(tracer: Tracer): void {
    this.tracer = tracer
  }

  /** Spans still open (for tests and leak checks). */
  get openCount(): number {
    return this.#runs.size + this.#turns.size + this.#chats.size + this.#tools.size
  }

  /** The span an agent's own work nests under: its run, else its current root turn. */
  #agentSpan(agentId: string): Span | undefined {
    return this.#runs.get(agentId) ?? this.#turns.get(agentId)
  }

  #start(name: string, kind: SpanKind, attrs: Attributes, parent: Span | undefined): Span {
    // a root span joins whatever the embedding application has active (an HTTP request span…)
    const parentContext: TraceContext = parent ? trace.setSpan(context.active(), parent) : context.active()
    return this.tracer.startSpan(name, { kind, attributes: attrs }, parentContext)
  }

  runStarted(info: SubagentInfo): void {
    if (this.#runs.has(info.runId)) return
    const parent = (info.execution !== undefined ? this.#tools.get(info.execution) : undefined) ?? this.#agentSpan(info.parentId)
    const attrs: Attributes = {
      [attributes.operation]: 'invoke_agent',
      [attributes.agentId]: info.childId,
      [attributes.depth]: info.depth,
      [attributes.mode]: info.mode,
      [attributes.rootId]: info.rootId,
    }
    if (info.label !== undefined) attrs[attributes.agentName] = info.label
    if (info.agent !== undefined) attrs[attributes.agent] = info.agent
    this.#runs.set(info.runId, this.#start(`invoke_agent ${info.label ?? info.childId}`, SpanKind.INTERNAL, attrs, parent))
  }

  runEnded(info: SubagentInfo): void {
    const span = this.#runs.get(info.runId)
    if (!span) return
    this.#runs.delete(info.runId)
    // the child's last request span, if its turn never closed it
    this.#endChat(info.childId, 'the run ended')
    try {
      if (info.stopReason !== undefined) span.setAttribute(attributes.stopReason, info.stopReason)
      setUsage(span, info.usage)
      if (info.error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: info.error })
      else if (info.stopReason !== 'completed') span.setStatus({ code: SpanStatusCode.ERROR, message: info.stopReason })
    } finally {
      span.end()
    }
  }

  /** A turn of an agent that is not a traced run (a root agent): its own `invoke_agent` span. */
  turnStarted(agentId: string, name: string | undefined): void {
    if (this.#runs.has(agentId) || this.#turns.has(agentId)) return
    const attrs: Attributes = { [attributes.operation]: 'invoke_agent', [attributes.agentId]: agentId }
    if (name !== undefined) attrs[attributes.agentName] = name
    this.#turns.set(agentId, this.#start(`invoke_agent ${name ?? agentId}`, SpanKind.INTERNAL, attrs, undefined))
  }

  turnEnded(agentId: string, reason: TurnEndReason): void {
    this.#endChat(agentId, turnEndMessage(reason))
    const span = this.#turns.get(agentId)
    if (!span) return
    this.#turns.delete(agentId)
    try {
      span.setAttribute(attributes.turnEnd, reason.kind)
      if (reason.kind !== 'completed') span.setStatus({ code: SpanStatusCode.ERROR, message: turnEndMessage(reason) })
    } finally {
      span.end()
    }
  }

  /** A model request is about to be sent (`step/start`). */
  chatStarted(agentId: string, provider: string | undefined, model: string | undefined): void {
    this.#endChat(agentId, 'a new request started')
    const attrs: Attributes = { [attributes.operation]: 'chat' }
    if (model !== undefined) attrs[attributes.requestModel] = model
    if (provider !== undefined) attrs[attributes.provider] = provider
    this.#chats.set(agentId, this.#start(`chat ${model ?? 'unknown'}`, SpanKind.CLIENT, attrs, this.#agentSpan(agentId)))
  }

  /** The request's `assistant/message`: usage, and an error status when it was interrupted. */
  chatEnded(agentId: string, usage: Usage | undefined, interrupted: boolean): void {
    const span = this.#chats.get(agentId)
    if (!span) return
    this.#chats.delete(agentId)
    try {
      setUsage(span, usage)
      if (interrupted) span.setStatus({ code: SpanStatusCode.ERROR, message: 'interrupted' })
    } finally {
      span.end()
    }
  }

  #endChat(agentId: string, failure: string): void {
    const span = this.#chats.get(agentId)
    if (!span) return
    this.#chats.delete(agentId)
    try {
      span.setStatus({ code: SpanStatusCode.ERROR, message: failure })
    } finally {
      span.end()
    }
  }

  toolStarted(exec: ToolExecution): void {
    if (this.#tools.has(exec.token)) return
    const parent = exec.parent !== undefined ? this.#tools.get(exec.parent) : undefined
    const span = this.#start(
      `execute_tool ${exec.name}`,
      SpanKind.INTERNAL,
      { [attributes.operation]: 'execute_tool', [attributes.toolName]: exec.name, [attributes.toolCallId]: exec.callId },
      parent ?? (exec.agent ? this.#agentSpan(exec.agent.id) : undefined),
    )
    this.#tools.set(exec.token, span)
  }

  /** The authoritative outcome (`tools/result`); a call that skipped the hooks gets its span here. */
  toolEnded(exec: ToolExecution, result: ToolResult): void {
    if (!this.#tools.has(exec.token)) this.toolStarted(exec)
    const span = this.#tools.get(exec.token)
    if (!span) return
    this.#tools.delete(exec.token)
    try {
      if (result.isError) span.setStatus({ code: SpanStatusCode.ERROR, message: result.code ?? 'tool error' })
    } finally {
      span.end()
    }
  }

  /** Ends every open span (plugin unload): innermost first, each marked unfinished. */
  closeAll(): void {
    const spans = [
      ...this.#chats.values(),
      ...[...this.#tools.values()].reverse(),
      ...[...this.#runs.values()].reverse(),
      ...this.#turns.values(),
    ]
    this.#chats.clear()
    this.#tools.clear()
    this.#runs.clear()
    this.#turns.clear()
    let failure: unknown
    for (const span of spans) {
      try {
        span.setAttribute(attributes.unfinished, true)
        span.setStatus({ code: SpanStatusCode.ERROR, message: UNFINISHED_REASON })
        span.end()
      } catch (error) {
        failure ??= error
      }
    }
    if (failure !== undefined) throw failure
  }
}
