/**
 * The open spans of one `Tracing` instance, keyed by what identifies them under concurrency: an
 * agent's spans by its id (a run's child, a root agent's turn, and its model request: an agent
 * sends one at a time), a tool execution by its `ToolExecution.token` (a run started by a tool
 * finds its tool's span by that token, `SubagentInfo.execution`: call ids need not be unique).
 * Never "the current span".
 */
import { type Attributes, type Context as TraceContext, context, type Span, SpanKind, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api'
import type { SubagentInfo, ToolExecution, ToolResult, TurnEndReason, Usage } from '../../lib/types.ts'

/**
 * Attribute names: the OpenTelemetry GenAI semantic conventions plus this project's `subagent.*`.
 * A span's start attributes spell them out as literal keys: V8 builds an object literal with
 * computed keys property by property at run time (≈ 10× the time of a literal's).
 */
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

/** The key `trace.getSpan` reads a context's span under, learnt by letting it read a probe once. */
const spanKey: symbol | undefined = (() => {
  let key: symbol | undefined
  const probe: TraceContext = {
    getValue: (asked) => {
      key = asked
      return undefined
    },
    setValue: () => probe,
    deleteValue: () => probe,
  }
  trace.getSpan(probe)
  return key
})()

/**
 * `trace.setSpan(base, span)` without the copy: the API's context copies `base`'s entries into a
 * new Map and makes three closures on every set (≈ 400 B per child span), while a tracer only
 * reads the parent context. Reads answer `span` for the span key and defer every other key to
 * `base`; a write makes the real context first.
 */
class ParentContext implements TraceContext {
  constructor(
    private readonly base: TraceContext,
    private readonly span: Span,
  ) {}

  getValue(key: symbol): unknown {
    return key === spanKey ? this.span : this.base.getValue(key)
  }

  setValue(key: symbol, value: unknown): TraceContext {
    return trace.setSpan(this.base, this.span).setValue(key, value)
  }

  deleteValue(key: symbol): TraceContext {
    return trace.setSpan(this.base, this.span).deleteValue(key)
  }
}

/**
 * One agent's open spans: its run's or its root turn's, and its model request's. Fields of one
 * record under the agent's id, not three maps: a cycle sets and deletes one map entry, and an
 * emptied map's table is reallocated on its next entry (≈ 240 B a set and delete).
 */
class AgentSpans {
  run: Span | undefined = undefined
  turn: Span | undefined = undefined
  chat: Span | undefined = undefined

  /** The span the agent's own work nests under: its run, else its current root turn. */
  get own(): Span | undefined {
    return this.run ?? this.turn
  }

  get isEmpty(): boolean {
    return this.run === undefined && this.turn === undefined && this.chat === undefined
  }
}

export class SpanBook {
  readonly #agents = new Map<string, AgentSpans>()
  readonly #tools = new Map<symbol, Span>()

  constructor(private tracer: Tracer) {}

  /** Starts every later span on `tracer`; spans already open keep theirs and end as usual. */
  useTracer(tracer: Tracer): void {
    this.tracer = tracer
  }

  /** Spans still open (for tests and leak checks). */
  get openCount(): number {
    let count = this.#tools.size
    for (const spans of this.#agents.values()) count += Number(spans.run !== undefined) + Number(spans.turn !== undefined) + Number(spans.chat !== undefined)
    return count
  }

  #spansOf(agentId: string): AgentSpans {
    let spans = this.#agents.get(agentId)
    if (!spans) this.#agents.set(agentId, (spans = new AgentSpans()))
    return spans
  }

  /** Drops an agent's record once it holds no open span. */
  #release(agentId: string, spans: AgentSpans): void {
    if (spans.isEmpty) this.#agents.delete(agentId)
  }

  #start(name: string, kind: SpanKind, attrs: Attributes, parent: Span | undefined): Span {
    // a root span joins whatever the embedding application has active (an HTTP request span…)
    const active = context.active()
    const parentContext: TraceContext = parent === undefined ? active : spanKey ? new ParentContext(active, parent) : trace.setSpan(active, parent)
    return this.tracer.startSpan(name, { kind, attributes: attrs }, parentContext)
  }

  runStarted(info: SubagentInfo): void {
    const spans = this.#spansOf(info.childId)
    if (spans.run !== undefined) return
    const parent = (info.execution !== undefined ? this.#tools.get(info.execution) : undefined) ?? this.#agents.get(info.parentId)?.own
    const attrs: Attributes = {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.id': info.childId,
      'subagent.depth': info.depth,
      'subagent.mode': info.mode,
      'subagent.root_id': info.rootId,
    }
    if (info.label !== undefined) attrs['gen_ai.agent.name'] = info.label
    if (info.agent !== undefined) attrs['subagent.agent'] = info.agent
    try {
      spans.run = this.#start(`invoke_agent ${info.label ?? info.childId}`, SpanKind.INTERNAL, attrs, parent)
    } finally {
      this.#release(info.childId, spans)
    }
  }

  runEnded(info: SubagentInfo): void {
    const spans = this.#agents.get(info.childId)
    const span = spans?.run
    if (!spans || !span) return
    spans.run = undefined
    // the child's last request span, if its turn never closed it
    this.#endChat(spans, 'the run ended')
    this.#release(info.childId, spans)
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
    const known = this.#agents.get(agentId)
    if (known?.own !== undefined) return
    const spans = known ?? this.#spansOf(agentId)
    const attrs: Attributes = { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.id': agentId }
    if (name !== undefined) attrs['gen_ai.agent.name'] = name
    try {
      spans.turn = this.#start(`invoke_agent ${name ?? agentId}`, SpanKind.INTERNAL, attrs, undefined)
    } finally {
      this.#release(agentId, spans)
    }
  }

  turnEnded(agentId: string, reason: TurnEndReason): void {
    const spans = this.#agents.get(agentId)
    if (!spans) return
    this.#endChat(spans, turnEndMessage(reason))
    const span = spans.turn
    spans.turn = undefined
    this.#release(agentId, spans)
    if (!span) return
    try {
      span.setAttribute(attributes.turnEnd, reason.kind)
      if (reason.kind !== 'completed') span.setStatus({ code: SpanStatusCode.ERROR, message: turnEndMessage(reason) })
    } finally {
      span.end()
    }
  }

  /** A model request is about to be sent (`step/start`). */
  chatStarted(agentId: string, provider: string | undefined, model: string | undefined): void {
    const spans = this.#spansOf(agentId)
    this.#endChat(spans, 'a new request started')
    const attrs: Attributes = { 'gen_ai.operation.name': 'chat' }
    if (model !== undefined) attrs['gen_ai.request.model'] = model
    if (provider !== undefined) attrs['gen_ai.provider.name'] = provider
    try {
      spans.chat = this.#start(`chat ${model ?? 'unknown'}`, SpanKind.CLIENT, attrs, spans.own)
    } finally {
      this.#release(agentId, spans)
    }
  }

  /** The request's `assistant/message`: usage, and an error status when it was interrupted. */
  chatEnded(agentId: string, usage: Usage | undefined, interrupted: boolean): void {
    const spans = this.#agents.get(agentId)
    const span = spans?.chat
    if (!spans || !span) return
    spans.chat = undefined
    this.#release(agentId, spans)
    try {
      setUsage(span, usage)
      if (interrupted) span.setStatus({ code: SpanStatusCode.ERROR, message: 'interrupted' })
    } finally {
      span.end()
    }
  }

  /** Ends the agent's open request span with an error status; the caller releases the record. */
  #endChat(spans: AgentSpans, failure: string): void {
    const span = spans.chat
    if (!span) return
    spans.chat = undefined
    try {
      span.setStatus({ code: SpanStatusCode.ERROR, message: failure })
    } finally {
      span.end()
    }
  }
  toolStarted(exec: ToolExecution): void {
    if (!this.#tools.has(exec.token)) this.#openTool(exec)
  }

  /** The authoritative outcome (`tools/result`); a call that skipped the hooks gets its span here. */
  toolEnded(exec: ToolExecution, result: ToolResult): void {
    const span = this.#tools.get(exec.token) ?? this.#openTool(exec)
    this.#tools.delete(exec.token)
    try {
      if (result.isError) span.setStatus({ code: SpanStatusCode.ERROR, message: result.code ?? 'tool error' })
    } finally {
      span.end()
    }
  }

  #openTool(exec: ToolExecution): Span {
    const parent = (exec.parent !== undefined ? this.#tools.get(exec.parent) : undefined) ?? (exec.agent ? this.#agents.get(exec.agent.id)?.own : undefined)
    const attrs: Attributes = { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': exec.name, 'gen_ai.tool.call.id': exec.callId }
    const span = this.#start(`execute_tool ${exec.name}`, SpanKind.INTERNAL, attrs, parent)
    this.#tools.set(exec.token, span)
    return span
  }

  /** Ends every open span (plugin unload): innermost first, each marked unfinished. */
  closeAll(): void {
    const agents = [...this.#agents.values()]
    const spans = [
      ...agents.map((spans) => spans.chat),
      ...[...this.#tools.values()].reverse(),
      ...agents.map((spans) => spans.run).reverse(),
      ...agents.map((spans) => spans.turn),
    ].filter((span) => span !== undefined)
    this.#agents.clear()
    this.#tools.clear()
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
