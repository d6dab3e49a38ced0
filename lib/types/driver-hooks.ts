/**
 * What driver plugins meet at the driver's hooks and the host's meter (SPEC §2, §9): the start
 * plan, run tickets, the agent meter and the delegation outlook.
 */
import type { ApprovalPolicy } from '../approval/policy.ts'
import type { BudgetLimit } from '../errors.ts'
import type { Agent } from './agent.ts'
import type { Usage } from './content.ts'
import type { StopReason, SubagentBaseline, SubagentStartRequest } from './run.ts'
import type { TurnEndReason } from './session.ts'

/**
 * The start plan `subagent/prepare` listeners see and adjust, and `subagent/setup` listeners read.
 */
export interface SubagentPlan {
  /**
   * The request as the driver's entry read it, once: a frozen copy (plain data copied; `parent`,
   * `signal` and a schemastery `outputSchema` are the caller's objects). A plugin checks the
   * request field it serves here, at `subagent/prepare` (a throw rejects the start), and uses only
   * this copy afterwards: the caller's object is never read again.
   */
  readonly request: Readonly<SubagentStartRequest>
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
  /** The baseline a `subagent/define` listener set (frozen), or `undefined`. */
  readonly baseline: Readonly<SubagentBaseline> | undefined
  /**
   * In `subagent/define` only: sets the child's baseline (SPEC §12), merged field by field with
   * what earlier calls set; a `maxDepth` lowers the depth cap at once. Throws `TypeError` for a
   * `maxDepth` that is not a non-negative safe integer, or when called outside `subagent/define`.
   */
  setBaseline(fields: SubagentBaseline): void
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
  /** The tool execution that started the run (`SubagentStartRequest.execution`), when one did. */
  readonly execution?: symbol
  readonly mode: 'spawn' | 'fork'
  readonly depth: number
  /** The agent definition the child was started from (its header's `agent`, SPEC §12). */
  readonly agent?: string
  /** At the end only. */
  readonly stopReason?: StopReason
  readonly usage?: Usage
  /** At the end of a run whose result rejected: the error's message. */
  readonly error?: string
}
