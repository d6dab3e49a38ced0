import type { Context } from 'cordis'
import Schema from 'schemastery'
import { Dispatch } from '../../cordis-glue/bridge.ts'
import { AgentDisposedError, abortedBeforePublication, SubagentError, thrownMessage } from '../../lib/errors.ts'
import { assertReservation, type BudgetRemaining, Pool, smallerReservation } from '../../lib/delegation/tree-budget.ts'
import type { Agent, BudgetReservation, BudgetStop, SubagentPlan, TreeUsage } from '../../lib/types.ts'
import { localizeConfig } from '../../locales/index.ts'
import { listenDirect, updateInPlace } from '../host/index.ts'
import { Admission, type Lane } from './admission.ts'
import { type BudgetNode, Ledger } from './ledger.ts'
import { CHILD_EVENT, type ChildRecord, GRANT_EVENT, type GrantRecord, SNAPSHOT_EVENT, type SnapshotRecord, usageBeyond } from './session-record.ts'

export { SubagentBudgetError } from '../../lib/errors.ts'
export type { BudgetRemaining }

declare module 'cordis' {
  interface Context {
    treeBudget: TreeBudget
  }
}

/**
 * A budget the whole delegation tree respects (SPEC §9): a per-parent concurrency queue, limits
 * on children, tokens and model requests checked before every start and every model request,
 * reservations for subtrees, and exact usage roll-up (`treeUsage`). Meets the driver and the host
 * only at hooks. A config update applies in place: limits change, what was spent stays.
 */
export class TreeBudget {
  #config: TreeBudget.Config
  readonly #ledger: Ledger
  readonly #admission: Admission
  readonly #agents: Context['agents']
  readonly #events: Dispatch
  /** False once the plugin is unloaded: the meter is gone, so a live run's later messages go uncounted. */
  #counting = true

  constructor(ctx: Context, config: TreeBudget.Config) {
    this.#config = config ?? {}
    const agents = ctx.agents
    this.#agents = agents
    this.#ledger = new Ledger(
      this.#config,
      (id) => agents.get(id),
      () => agents.list(),
      // a ticket's way back in (a node's `settled()`), made once
      (node) => {
        this.#end(node)
        return this.#counting
      },
      (node, agent, counted, startCounted) => this.#holdAdopted(node, agent, counted, startCounted),
    )
    this.#admission = new Admission(
      () => this.#config.maxConcurrent ?? TreeBudget.DEFAULT_MAX_CONCURRENT,
      (signal) => new SubagentError('ABORTED', abortedBeforePublication, { cause: signal.reason }),
    )
    const logger = ctx.logger('tree-budget')
    this.#events = new Dispatch(ctx.events, (error, event) => logger.warn(`a "${event}" listener failed: ${thrownMessage(error)}`))
    // a config update applies in place instead of restarting: what was spent lives with the trees
    updateInPlace<TreeBudget.Config>(ctx, (next) => this.#update(next))

    listenDirect(ctx, 'subagent/prepare', (plan) => {
      // the request's own field, checked by the plugin that serves it: `plan.request` is the
      // driver's frozen snapshot, so what passes here is what admission reserves; a definition's
      // budget (SPEC §12) is served the same way, each limit the smaller of the two
      const { budget } = plan.request
      const baseline = plan.baseline?.budget
      if (budget === undefined && baseline === undefined) return
      assertReservation(budget)
      assertReservation(baseline)
      plan.claim('budget')
    })
    listenDirect(ctx, 'subagent/admit', (plan) => this.#admit(plan))
    listenDirect(ctx, 'subagent/abandon', (plan) => this.#abandon(plan))
    listenDirect(ctx, 'agent/created', (agent) => this.#grant(agent))
    // a whole tree published again (SPEC §14): every agent joins its parent's node now, parents
    // first, so the tree's counts hold what each spent, unsettled runs (no `budget/child` record
    // in the parent's file) and a request in flight at the crash (its `step/start`) included
    listenDirect(ctx, 'subagent/resumed', (tree) => {
      this.#ledger.nodeOf(tree.root)
      for (const agent of tree.agents) this.#ledger.nodeOf(agent)
    })
    listenDirect(ctx, 'subagent/outlook', (outlook) => {
      const node = this.#ledger.nodeOf(outlook.agent)
      const remaining = node.pool.remainingAll()
      outlook.budget = remaining
      if (remaining.children <= 0) outlook.blockedBy = 'children'
      else if (remaining.tokens <= 0) outlook.blockedBy = 'tokens'
    })
    // the checks and counts of every step ride on the loop itself: a hook dispatch per step (and
    // per session event) cost more than the integer compares they carry
    agents.meter({
      beforeStep: (agent) => this.#stopFor(this.#ledger.nodeOf(agent)),
      // checked again where the request is sent: concurrent agents may have spent the rest meanwhile
      request: (agent) => {
        const known = this.#ledger.known(agent.id)
        // a node made just now was restored from the session, whose `step/start` already counts this request
        const node = known ?? this.#ledger.nodeOf(agent)
        const stop = this.#stopFor(node)
        if (!stop && known) this.#ledger.chargeRequest(node)
        return stop
      },
      // before the message is appended: a node restored now reads the session without it
      usage: (agent, usage) => this.#ledger.chargeMessage(this.#ledger.nodeOf(agent), usage),
    })
    listenDirect(ctx, 'agent/disposed', (agent) => {
      const node = this.#ledger.known(agent.id)
      if (node) {
        // a run whose result rejected without settling leaves the count with its child
        this.#end(node)
        // a resumed child's rebuilt reservation, which no run ticket gives back
        node.reservation?.close()
        this.#ledger.forget(agent.id)
      }
      this.#admission.close(agent.id, disposedError)
    })
    ctx.effect(() => () => {
      this.#counting = false
      // what the trees spent outlives this instance in their sessions: a reloaded budget starts from it
      this.#writeSnapshots()
      // nothing will free a slot any more: queued starts go on, unmetered
      this.#admission.releaseAll()
    }, 'tree-budget')
    ctx.provide('treeBudget', this)
  }

  /**
   * Usage of the subtree rooted at `agent`: its own and every descendant's message tokens, model
   * requests sent, and runs started below it. Counts from when the budget first heard of the tree.
   * Throws `TypeError` `treeBudget.usage agent must be an agent` for anything else.
   */
  usage(agent: Agent): TreeUsage {
    assertAgent(agent, 'usage')
    return this.#ledger.nodeOf(agent).usage()
  }

  /**
   * What `agent`'s tree — or the reservation it lives under — has left of each limit (`Infinity`
   * where none applies), live reservations of other subtrees excluded. Never negative. Throws
   * `TypeError` `treeBudget.remaining agent must be an agent` for anything else.
   */
  remaining(agent: Agent): BudgetRemaining {
    assertAgent(agent, 'remaining')
    return this.#ledger.nodeOf(agent).pool.remainingAll()
  }

  #update(config: TreeBudget.Config): void {
    this.#config = config ?? {}
    this.#ledger.setLimits(this.#config)
    // a raised concurrency limit lets waiters in; a lowered budget stops new work at the next check
    this.#admission.drain()
  }

  /** Synchronous while the parent has a free slot; a start that must wait gets a promise. */
  #admit(plan: SubagentPlan): void | Promise<void> {
    const parent = plan.request.parent
    const parentNode = this.#ledger.nodeOf(parent)
    // kept on the node: a start looks its parent's lane up once per parent, not once per start
    const lane = parentNode.lane ?? (parentNode.lane = this.#admission.lane(parent.id))
    if (this.#admission.tryAcquire(lane)) return this.#book(plan, parentNode, lane)
    // a start the budget cannot pay for fails at once instead of after a wait in line
    parentNode.pool.assertCanStart(reservationOf(plan))
    // looked up again after the wait: the parent's node may have been dropped and restored meanwhile
    return this.#admission.wait(lane, plan.signal).then(() => this.#book(plan, this.#ledger.nodeOf(parent), lane))
  }

  /** Charges an admitted start and books its ticket on the child's node; gives the slot back if the start is refused. */
  #book(plan: SubagentPlan, parentNode: BudgetNode, slot: Lane): void {
    const parent = plan.request.parent
    try {
      const reservation = reservationOf(plan)
      // checked again: the tree may have spent more since the start was let in line
      parentNode.pool.assertCanStart(reservation)
      this.#ledger.chargeChild(parentNode, 1)
      const pool = reservation ? Pool.reserve(parentNode.pool, reservation) : undefined
      const node = this.#ledger.childNode(parentNode, pool ?? parentNode.pool, plan.childId)
      node.holder = parent
      node.reservation = pool
      node.reserved = reservation
      node.slot = slot
      // the node is the ticket: the driver gives it back on the run's settle path (no `subagent/settle` listener)
      plan.hold(node)
    } catch (error) {
      this.#admission.release(slot)
      throw error
    }
  }

  #abandon(plan: SubagentPlan): void {
    const node = this.#ledger.known(plan.childId)
    if (!node) {
      // admitted by an unloaded budget, whose snapshot of the parent counts its start
      this.#ledger.abandonStarted(plan.request.parent, plan.childId)
      return
    }
    if (!node.holding) return
    this.#ledger.forget(plan.childId)
    // a start that never created its child was not a run of the tree
    this.#ledger.chargeChild(node.parent!, -1)
    this.#close(node)
  }

  /** A published child's grant record (SPEC §9 resume rule), when a session store is loaded. */
  #grant(child: Agent): void {
    if (!this.#isPersisting()) return
    const node = this.#ledger.known(child.id)
    if (!node?.holding) return
    const tree = rootPool(node.pool)
    const grant: GrantRecord = {
      ...(node.reserved ? { reservation: { ...node.reserved } } : {}),
      treeSpent: { ...tree.spent },
    }
    child.session.append(GRANT_EVENT, grant)
  }

  /**
   * A run an unloaded budget admitted still runs: it holds a slot of its parent's lane here until
   * its agent is idle (its ticket, which would free it at settle, is the unloaded instance's), so
   * `maxConcurrent` holds across a reload. Then, with a session store, its parent's file gets a
   * `budget/child` record of what the file does not hold yet (`counted`; no start when
   * `startCounted`), so a later resume of the parent counts it.
   */
  #holdAdopted(node: BudgetNode, agent: Agent, counted: Readonly<TreeUsage>, startCounted: boolean): void {
    const parentNode = node.parent
    if (agent.status !== 'running' || !parentNode) return
    const lane = parentNode.lane ?? (parentNode.lane = this.#admission.lane(parentNode.agentId))
    lane.live++
    const parent = this.#agents.get(parentNode.agentId)
    const done = () => {
      this.#admission.release(lane)
      // after this instance's unload its snapshot of the parent holds it
      if (!this.#counting || !this.#isPersisting() || !parent || this.#agents.get(parent.id) !== parent) return
      const record: ChildRecord = { childId: node.agentId, usage: usageBeyond(node.usage(), counted) }
      if (startCounted) record.continued = true
      try {
        parent.session.append(CHILD_EVENT, record)
      } catch {
        // a parent whose session is gone has no file to keep the record in
      }
    }
    agent.whenIdle().then(done, done)
  }

  #stopFor(node: BudgetNode): BudgetStop | undefined {
    const spent = this.#ledger.spentBeforeRequest(node)
    return spent ? { kind: 'budget', limit: spent.limit, used: spent.used, max: spent.max } : undefined
  }

  /** The run leaves the count: its slot and its reservation's unspent part go back. Once. */
  #end(node: BudgetNode): void {
    const parent = node.holder
    if (!parent) return
    this.#close(node)
    // for a resumed parent: its file then holds what this subtree spent; after the unload the
    // parent's snapshot holds what was counted, and a record would count it twice
    if (!this.#counting || !this.#isPersisting()) return
    try {
      const record: ChildRecord = { childId: node.agentId, usage: node.usage() }
      if (this.#agents.get(parent.id) === parent) parent.session.append(CHILD_EVENT, record)
    } catch {
      // a parent whose session is gone has no file to keep the record in
    }
  }

  /**
   * At the unload: a `budget/snapshot` into the session of every live agent the budget knows —
   * its subtree usage, for a tree's head what the tree spent, and the children admitted but not
   * yet published (their start is counted, they get no snapshot). Written with or without a
   * session store: a reloaded budget in the same process reads it from memory.
   */
  #writeSnapshots(): void {
    const nodes = this.#ledger.nodes()
    const started = new Map<string, string[]>()
    for (const node of nodes) {
      if (!node.holder || this.#agents.get(node.agentId)) continue
      const list = started.get(node.holder.id)
      if (list) list.push(node.agentId)
      else started.set(node.holder.id, [node.agentId])
    }
    for (const node of nodes) {
      const agent = this.#agents.get(node.agentId)
      if (!agent) continue
      const snapshot: SnapshotRecord = { usage: node.usage() }
      if (!node.parent) snapshot.treeSpent = { ...rootPool(node.pool).spent }
      const children = started.get(node.agentId)
      if (children) snapshot.started = children
      // only while it is held: a settled run's reservation gave its unspent part back
      if (node.reservation && node.reserved) snapshot.reservation = { ...node.reserved }
      try {
        agent.session.append(SNAPSHOT_EVENT, snapshot)
      } catch {
        // an agent whose session is gone (disposed meanwhile) has nothing to resume from
      }
    }
  }

  /**
   * Whether a session store is loaded (something answers `session/load`): without one no session
   * can be resumed, so the budget records are not written and a parent's log does not grow.
   */
  #isPersisting(): boolean {
    return this.#events.has('session/load')
  }

  /** Gives back what an admitted run holds (its slot, its reservation's unspent part), once. */
  #close(node: BudgetNode): void {
    const slot = node.slot!
    const reservation = node.reservation
    node.holder = undefined
    node.slot = undefined
    node.reservation = undefined
    reservation?.close()
    this.#admission.release(slot)
  }
}

/** What the budget reads of an agent it may not know yet: its id, header and events. */
function assertAgent(agent: unknown, method: 'usage' | 'remaining'): void {
  const session = (agent as { session?: { header?: unknown; events?: unknown } } | null | undefined)?.session
  const isAgent =
    typeof (agent as { id?: unknown } | null | undefined)?.id === 'string' &&
    typeof session?.header === 'object' &&
    session.header !== null &&
    Array.isArray(session.events)
  if (!isAgent) throw new TypeError(`treeBudget.${method} agent must be an agent`)
}

function disposedError(parentId: string): AgentDisposedError {
  return new AgentDisposedError(parentId)
}

/** The start's reservation: the request's and its definition's (`plan.baseline`), each limit the smaller, as `subagent/prepare` checked them. */
function reservationOf(plan: SubagentPlan): BudgetReservation | undefined {
  return smallerReservation(plan.request.budget, plan.baseline?.budget)
}

function rootPool(pool: Pool): Pool {
  let root = pool
  while (root.parent) root = root.parent
  return root
}

export namespace TreeBudget {
  export const inject = ['inprocessRun', 'agents']
  export const DEFAULT_MAX_CONCURRENT = 16
  export interface Config {
    maxConcurrent?: number
    maxChildren?: number
    maxTokens?: number
    maxModelRequests?: number
  }
  // at most 2^53 − 1: a larger count is not one the budget could ever reach exactly
  const count = () => Schema.natural().max(Number.MAX_SAFE_INTEGER)
  // field descriptions: `config.treeBudget` in locales/*.yml
  export const Config: Schema<Config> = localizeConfig(
    Schema.object({
      maxConcurrent: Schema.natural().min(1).max(Number.MAX_SAFE_INTEGER).default(DEFAULT_MAX_CONCURRENT),
      maxChildren: count(),
      maxTokens: count(),
      maxModelRequests: count(),
    }),
    'treeBudget',
  )
}

export default TreeBudget
