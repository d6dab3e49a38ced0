/**
 * Public data types of the host and the driver (SPEC §1, §2). Plain types only: no cordis
 * registration, no runtime code beyond type imports.
 */
import type { Context } from 'cordis'
import type { ApprovalPolicy } from './approval/policy.ts'
import type { BudgetLimit } from './errors.ts'
import type { Diagnostic } from './diagnostic.ts'
import type { OutputSchema } from './structured-type.ts'

export type { BudgetLimit }
export type { ApprovalDecisionWord, ApprovalPolicy, ApprovalRule } from './approval/policy.ts'

// ---------------------------------------------------------------------------------------------
// Content (SPEC §1.1)

export interface TextBlock { type: 'text'; text: string }
export interface ReasoningBlock { type: 'reasoning'; text: string }
/** A model's request to run a tool; `arguments` is JSON text, as the model sent it. */
export interface ToolCallBlock { type: 'tool-call'; id: string; name: string; arguments: string }
export type ContentBlock = TextBlock | ReasoningBlock | ToolCallBlock

export interface Usage { inputTokens: number; outputTokens: number }

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue }

// ---------------------------------------------------------------------------------------------
// Sessions (SPEC §1.2)

export interface SessionHeader {
  readonly id: string
  readonly createdAt: number
  readonly cwd?: string
  readonly parentSession?: string
  readonly origin?: 'subagent'
  readonly delegationDepth?: number
  readonly seedLength?: number
  /** A child's label, when its start request had one (SPEC §10 lineage). */
  readonly label?: string
  /** The parent's tool call that started the child, when a tool started it (SPEC §10 lineage). */
  readonly callId?: string
  /** The agent definition the child was started from (SPEC §12), a name matching `^[a-z][a-z0-9-]{0,63}$`. */
  readonly agent?: string
  /**
   * The child's approval policy as recorded when it started (SPEC §11.1): its ancestors' and its
   * own, merged strictest, so the guard survives `agents.resume`.
   */
  readonly approval?: ApprovalPolicy
}

export type CancelCause =
  | { kind: 'user' }
  | { kind: 'parent' }
  | { kind: 'disposed' }
  | { kind: 'hook'; reason: string }

export type TurnEndReason =
  | { kind: 'completed' }
  | { kind: 'max-tokens' }
  | { kind: 'aborted'; cause: CancelCause }
  | { kind: 'error'; error: { message: string; code?: string } }
  | { kind: 'blocked' }
  | { kind: 'interrupted' }
  /**
   * A tree budget was spent before a model request (SPEC §9). `used` and `max` are the figures of
   * the budget (tree or reservation) that stopped the turn, when the stopping plugin knows them.
   */
  | { kind: 'budget'; limit: BudgetLimit; used?: number; max?: number }

/** Payloads of the event types the agent loop writes. */
export interface SessionEventData {
  'turn/start': { turn: number; trigger: 'message' }
  'user/message': { content: ContentBlock[]; source: { kind: 'user' | 'plugin' } }
  'step/start': { turn: number; step: number }
  'assistant/delta': { turn: number; step: number; text: string }
  'assistant/message': { turn: number; step: number; content: ContentBlock[]; usage?: Usage; interrupted?: true }
  'tool/result': { turn: number; step: number; callId: string; name: string; isError: boolean; content: ContentBlock[] }
  'turn/end': { turn: number; reason: TurnEndReason }
  'session/end-seed': Record<string, never>
}

export type SessionEventType = keyof SessionEventData

/** An event of one of the loop's types, its `data` typed by `type`. */
export interface TypedSessionEvent<T extends SessionEventType> {
  readonly seq: number
  readonly type: T
  readonly data: SessionEventData[T]
}

/** The loop's events as a union keyed by `type`: a `switch` on `type` narrows `data`. */
export type KnownSessionEvent = { [T in SessionEventType]: TypedSessionEvent<T> }[SessionEventType]

/** An event of any type (plugins append their own); its `data` is unknown until narrowed. */
export interface AnySessionEvent {
  readonly seq: number
  readonly type: string
  readonly data: unknown
}

/**
 * One frozen entry of a session log, `{seq, type, data}` at run time (SPEC §1.2); `seq` equals its
 * index. Unparameterised it is any event: narrow it with `isEvent(event, type)` or
 * `isKnownEvent(event)` (`lib/session-event.ts`), never with a cast. `SessionEvent<'turn/end'>`
 * is that event typed.
 */
export type SessionEvent<T extends string = string> = string extends T
  ? KnownSessionEvent | AnySessionEvent
  : T extends SessionEventType
    ? TypedSessionEvent<T>
    : AnySessionEvent

export interface Session {
  readonly id: string
  readonly header: SessionHeader
  readonly events: readonly SessionEvent[]
  /** Appends one event (frozen) and emits `session/event` after the append. */
  append<T extends string>(type: T, data: T extends SessionEventType ? SessionEventData[T] : unknown): SessionEvent<T>
}

// ---------------------------------------------------------------------------------------------
// Agents (SPEC §1.3)

/** Options an agent runs with. Extensible: plugins may read keys of their own. */
export interface AgentOptions {
  provider?: string
  model?: string
  maxTokens?: number
  maxSteps?: number
  subagentDepth?: number
  /** The agent's own approval policy (SPEC §11.1): it can only make its calls more guarded. */
  approval?: ApprovalPolicy
  [key: string]: unknown
}

export type AgentStatus = 'idle' | 'running'

export interface Agent {
  readonly id: string
  /** The agent's scope context, created on first access. Registrations through it are scoped. */
  readonly ctx: Context
  readonly session: Session
  readonly options: Readonly<AgentOptions>
  readonly status: AgentStatus
  /**
   * Enqueues a user message and starts a turn synchronously: `status` is `running` on return.
   * Throws `TypeError` for content that is not a string or valid blocks, or a `source` other than
   * `'user'` or `'plugin'`.
   */
  followup(content: string | ContentBlock[], source?: 'user' | 'plugin'): void
  /** Resolves when no turn is running or queued. */
  whenIdle(): Promise<void>
  /** Clears queued input and aborts the running turn; does nothing on an idle agent. */
  cancel(cause: CancelCause): void
}

export interface CreateAgentOptions {
  sessionId?: string
  header?: {
    cwd?: string
    parentSession?: string
    origin?: 'subagent'
    delegationDepth?: number
    seedLength?: number
    label?: string
    callId?: string
    agent?: string
    approval?: ApprovalPolicy
  }
  seed?: readonly SessionEvent[]
  agentOptions?: AgentOptions
  signal?: AbortSignal
  /** Runs in the unpublished window; may register scoped tools, sections, listeners. */
  setup?(agent: Agent): void | Promise<void>
}

export interface AgentHandle {
  readonly agent: Agent
  /** Memoized: every caller gets the same promise. */
  dispose(): Promise<void>
}

// ---------------------------------------------------------------------------------------------
// Tools (SPEC §1.5)

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

export type JsonSchema = { [key: string]: unknown }

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

// ---------------------------------------------------------------------------------------------
// System prompt (SPEC §1.6)

export interface PromptSection { name: string; order: number; text: string }
export interface PromptAssembly { sections: PromptSection[] }

// ---------------------------------------------------------------------------------------------
// Models (SPEC §1.7)

export type ModelMessage =
  | { role: 'user'; content: ContentBlock[] }
  | { role: 'assistant'; content: ContentBlock[] }
  | { role: 'tool'; callId: string; name: string; isError: boolean; content: ContentBlock[] }

export interface ModelRequest {
  agent: Agent
  model: string
  system: string
  messages: readonly ModelMessage[]
  tools?: readonly ToolSchema[]
  maxTokens?: number
  signal: AbortSignal
}

export type FinishReason = 'stop' | 'tool-calls' | 'max-tokens'

export type StreamPart =
  | { type: 'text-delta'; text: string }
  | { type: 'tool-call'; id: string; name: string; arguments: string }
  | { type: 'finish'; reason: FinishReason; usage?: Usage }

export interface ModelAdapter {
  stream(request: ModelRequest): AsyncIterable<StreamPart>
}

// ---------------------------------------------------------------------------------------------
// The driver (SPEC §2)

export type StopReason = 'completed' | 'aborted' | 'error' | 'max-tokens' | 'refusal' | 'budget'

/**
 * What `start`/`spawn`/`fork` take. `S` is the `outputSchema`'s own type, from which the run's
 * `structured` type is inferred (`StructuredOf`).
 */
export interface SubagentStartRequest<S extends OutputSchema = OutputSchema> {
  parent: Agent
  prompt: string | ContentBlock[]
  signal: AbortSignal
  label?: string
  agentOptions?: AgentOptions
  /** A JSON Schema of the subset (SPEC §3) or a schemastery `Schema`, converted to one at entry. */
  outputSchema?: S
  maxDepth?: number
  toolFilter?: { allow?: string[]; deny?: string[] }
  persona?: string
  /**
   * SPEC §8.3: the child sees at most the global tools the parent sees at start (a snapshot), and
   * `toolFilter` only narrows that. Default `false` (SPEC §2.2's flat scope).
   */
  inheritRestrictions?: boolean
  /**
   * Reserves this much of what the tree has left for the child's subtree (SPEC §9); each field a
   * non-negative safe integer. Served by `TreeBudget`: without it the start rejects as unsupported.
   */
  budget?: BudgetReservation
  /** The parent's tool call that starts this child (set by the `subagent` tool); recorded in the child's header. */
  callId?: string
  /**
   * The child's own approval policy (SPEC §11.1): merged strictest with its ancestors' and
   * recorded in its header. Served by `Approvals`: without it the start rejects as unsupported.
   */
  approval?: ApprovalPolicy
}

/** What a start reserves for the child's subtree; an absent field reserves nothing of that limit. */
export interface BudgetReservation {
  tokens?: number
  modelRequests?: number
  children?: number
}

/** Usage of a subtree: its agents' own message usage, model requests sent and runs started. */
export interface TreeUsage {
  inputTokens: number
  outputTokens: number
  modelRequests: number
  children: number
}

export interface SubagentStartOptions {
  seed?: readonly SessionEvent[]
}

/** `T` is the type of `structured`, inferred from the start's `outputSchema`. */
export interface SubagentResult<T = unknown> {
  output: ContentBlock[]
  structured?: T
  stopReason: StopReason
  /** Why a non-completed run ended, in en-US (SPEC §2.4); `diagnosticText` rendered. */
  diagnostic?: string
  /**
   * The same diagnostic as a `diagnostic.*` locale key and its params, to show in another locale
   * or route on; set wherever `diagnostic` is set by this package.
   */
  diagnosticText?: Diagnostic
  usage?: Usage
  /**
   * The child's own usage plus every descendant's, when `TreeBudget` is loaded (SPEC §9). A
   * snapshot taken when the result settles.
   */
  treeUsage?: Usage
}

/** One session event of a run's child or of a descendant, with the lineage of its agent. */
export interface RunEvent {
  /** The agent whose session recorded the event: the run's child or one of its descendants. */
  readonly agentId: string
  /** That agent's parent (for the child: the run's parent). */
  readonly parentId: string
  /** That agent's delegation depth. */
  readonly depth: number
  readonly event: SessionEvent
}

export interface SubagentRun<T = unknown> {
  readonly id: string
  readonly agent: Agent
  readonly result: Promise<SubagentResult<T>>
  /** True once the request signal aborted or `dispose()` was called. */
  readonly isCancelled: boolean
  /** Idempotent. Rejects only if disposing the child's handle failed. */
  dispose(): Promise<void>
  /**
   * The child's own events from its first, then its and its descendants' events as they are
   * appended, until `result` settles. Holds one listener until then or until `return()` (`break`).
   */
  events(): AsyncIterableIterator<RunEvent>
}

/**
 * The start plan `subagent/prepare` listeners see and adjust, and `subagent/setup` listeners read.
 */
export interface SubagentPlan {
  readonly request: SubagentStartRequest
  /**
   * The id the child will have (its agent, session and run id), fixed at entry: a listener can
   * name the child before it exists (`TreeBudget` books its start under it at `subagent/admit`).
   */
  readonly childId: string
  readonly mode: 'spawn' | 'fork'
  /**
   * `request.signal` as the entry checks read and checked it, once: listeners use this one, so a
   * request whose `signal` getter answers differently later cannot make them wait on another.
   */
  readonly signal: AbortSignal
  readonly parentDepth: number
  readonly childDepth: number
  /** The effective cap: `request.maxDepth`, lowered by `capDepth`; `Infinity` while nothing caps depth. */
  readonly depthCap: number
  /**
   * Lowers `depthCap` to `cap`. It can only lower: a cap larger than the current one keeps the
   * current one. Throws `TypeError` `subagent plan depth cap must be a non-negative safe integer`
   * for anything else (-1, 1.5, NaN, Infinity); thrown in `subagent/prepare`, that rejects the start.
   */
  capDepth(cap: number): void
  /**
   * Declares that a loaded plugin serves a capability-bearing request field (e.g. `outputSchema`);
   * `validate` runs at entry step 6 and may throw to reject the start.
   */
  claim(field: string, validate?: () => void): void
  /**
   * For a `subagent/admit` listener that booked something for the run: the driver calls
   * `ticket.settled()` itself, exactly once, when the run's result settles (before the
   * `subagent/settle` waterfall, or as it rejects), so the listener needs no `subagent/settle` hop.
   * A start rejected before its run exists never calls it (`subagent/abandon` is heard instead).
   * Tickets are called in the order they were held.
   */
  hold(ticket: RunTicket): void
  /**
   * Records a field of the child's session header: `approval` (SPEC §11.1) or `agent` (§12), for
   * a `subagent/define` or `subagent/prepare` listener. Checked at once: a malformed value, or
   * another field, throws a `TypeError` (`subagent header <field> …`), which rejects the start
   * from such a listener. A later record of a field replaces the earlier one.
   */
  recordHeader(field: 'agent' | 'approval', value: unknown): void
  /** The header fields recorded so far (`recordHeader`), or `undefined` while none is. */
  readonly recordedHeader: { readonly agent?: string; readonly approval?: ApprovalPolicy } | undefined
}

/**
 * What a `subagent/admit` listener booked for one run (a slot, a reservation), handed to the
 * driver with `plan.hold()`. Part of the `subagent/admit` contract: the plugins still meet only at
 * that hook, the driver just calls back instead of dispatching `subagent/settle` to it.
 */
export interface RunTicket {
  /**
   * The run's result is settling: give back what the run holds. An answer becomes the result's
   * `treeUsage` (the first ticket that answers wins; ignored when the result rejects). A throw
   * rejects `run.result`, as a throwing `subagent/settle` listener does.
   */
  settled(): Usage | undefined
}

/** The turn end a spent tree budget asks for before a model request (SPEC §9). */
export type BudgetStop = Extract<TurnEndReason, { kind: 'budget' }>

/**
 * Bookkeeping the agent loop calls directly, without a hook dispatch, for every agent: a tree
 * budget is consulted on every step of every agent, where a dispatch per step would cost more
 * than the check itself. Installed with `ctx.agents.meter()`. Methods are synchronous; a throw
 * ends the turn `error`.
 */
export interface AgentMeter {
  /** Before each model step, after `agent/pre-step` let it in: a stop ends the turn, no `step/start`. */
  beforeStep(agent: Agent): BudgetStop | undefined
  /**
   * Just before the request is sent (after `agent/model-request`), in the same synchronous
   * stretch as the send: a stop ends the turn instead; otherwise the request counts as sent.
   */
  request(agent: Agent): BudgetStop | undefined
  /**
   * An `assistant/message` carrying `usage` is about to be appended to the agent's session (so
   * that its `session/event` observers already see it counted). `usage` is the message's own
   * object, frozen: a write to it throws, ending the turn `error`.
   */
  usage(agent: Agent, usage: Usage): void
}

/** What a tree budget has left for an agent; `Infinity` where no limit applies. */
export interface DelegationBudget {
  tokens: number
  modelRequests: number
  children: number
}

/**
 * What an agent could delegate now (SPEC §9), as `subagent/outlook` listeners report it:
 * `DepthPolicy` lowers the depth cap, `TreeBudget` sets `budget` and, when a start could not be paid
 * for, `blockedBy`.
 */
export interface DelegationOutlook {
  readonly agent: Agent
  /** The agent's own depth (header and runtime, as the driver counts it). */
  readonly depth: number
  readonly childDepth: number
  /** The effective cap, lowered by `capDepth`; `Infinity` while no policy caps depth. */
  readonly depthCap: number
  /**
   * Lowers `depthCap` to `cap`; a larger cap keeps the current one (it can only lower). Throws
   * `TypeError` `subagent outlook depth cap must be a non-negative safe integer` for anything else.
   */
  capDepth(cap: number): void
  budget?: DelegationBudget
  blockedBy?: BudgetLimit
  /** False when a child would exceed `depthCap` or a limit blocks a start. */
  readonly canStart: boolean
}

/** What `subagent/start` and `subagent/end` observers receive. */
export interface SubagentInfo {
  readonly runId: string
  readonly parentId: string
  readonly childId: string
  /** The tree's root agent: the topmost live ancestor, or the `parentSession` it names when that one is not live. */
  readonly rootId: string
  readonly label?: string
  /** The parent's tool call that started the run, when a tool started it. */
  readonly callId?: string
  readonly mode: 'spawn' | 'fork'
  readonly depth: number
  /** At the end only. */
  readonly stopReason?: StopReason
  readonly usage?: Usage
  /** At the end of a run whose result rejected: the error's message. */
  readonly error?: string
}
