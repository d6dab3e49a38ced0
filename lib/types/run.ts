/**
 * What the driver takes and gives (SPEC §2): a start request, its result, the run and its events.
 */
import type { ApprovalPolicy } from '../approval/policy.ts'
import type { OutputSchema } from '../schema/structured-type.ts'
import type { Diagnostic } from '../text/diagnostic.ts'
import type { Agent, AgentHandle, AgentOptions } from './agent.ts'
import type { ContentBlock, Usage } from './content.ts'
import type { JsonSchema } from './json.ts'
import type { SessionEvent } from './session.ts'

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
   * The token (`ToolExecution.token`) of the tool execution that starts this child (set by the
   * `subagent` tool), handed to observers in `SubagentInfo.execution`: a call id need not be
   * unique (a server may send the same one twice), an execution is. Not recorded in the header.
   */
  execution?: symbol
  /**
   * The child's own approval policy (SPEC §11.1): merged strictest with its ancestors' and
   * recorded in its header. Served by `Approvals`: without it the start rejects as unsupported.
   */
  approval?: ApprovalPolicy
  /**
   * The name of an agent definition (SPEC §12) to start the child from: a `subagent/define`
   * listener (`AgentDefinitions`) turns it into the plan's baseline. Without one loaded the start
   * rejects with `subagent runtime does not support the "agent" capability`.
   */
  agent?: string
}

/** A definition a start may name (`request.agent`), as the `subagent` tool offers it to the model. */
export interface SubagentCatalogEntry {
  name: string
  /** What the parent model reads to choose it. */
  description: string
  /** The `subagent` tool's default for `background` when it is used. */
  background?: boolean
}

/**
 * What a `subagent/define` listener sets as the child's starting point (`plan.setBaseline`), before
 * the request's own fields apply. Each field is merged by the plugin that serves it: the driver
 * takes `persona` and `agentOptions` unless the request gives its own, composes `toolFilter` with
 * the request's (a tool must pass both; prefixes ending in `*` are expanded against the global
 * tools at start) and caps depth with `maxDepth` (the smaller wins); `StructuredOutput` takes
 * `outputSchema` unless the request gives one; `TreeBudget` takes the smaller of each `budget`
 * limit; `Approvals` the strictest `approval`. A field no loaded plugin serves rejects the start as
 * an unsupported capability.
 */
export interface SubagentBaseline {
  persona?: string
  agentOptions?: AgentOptions
  outputSchema?: JsonSchema
  toolFilter?: { allow?: readonly string[]; deny?: readonly string[] }
  maxDepth?: number
  budget?: BudgetReservation
  approval?: ApprovalPolicy
  /** The `subagent` tool's default for `background`. */
  background?: boolean
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

/** A tree published again by `ctx.inprocessRun.resumeTree` (SPEC §14). */
export interface ResumedTree {
  readonly root: Agent
  /** The descendants, root excluded, each after its parent. */
  readonly agents: readonly Agent[]
  /** Disposes the whole tree (the root, and with it every agent it owns). Memoized. */
  dispose(): Promise<void>
}

/** What `subagent/resumed` listeners get: the tree just published, every open turn closed. */
export interface ResumedTreeInfo {
  readonly rootId: string
  readonly root: Agent
  readonly agents: readonly Agent[]
  /** The handle of an agent of this tree (to dispose one agent, e.g. a delivered background child). */
  handleOf(agent: Agent): AgentHandle | undefined
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
