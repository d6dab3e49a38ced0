import type { Context, Fiber } from 'cordis'
import Schema from 'schemastery'
import { Dispatch } from '../host/cordis-bridge.ts'
import { AgentDisposedError, abortedBeforePublication, SubagentError, thrownMessage } from '../../lib/errors.ts'
import { assertReservation, type BudgetRemaining, Pool } from '../../lib/tree-budget.ts'
import type { Agent, BudgetReservation, SubagentPlan, SubagentResult, SubagentRun, TreeUsage } from '../../lib/types.ts'
import { localizeConfig } from '../../locales/index.ts'
import { listenDirect } from '../host/index.ts'
import { Admission, type Slot } from './admission.ts'
import { type BudgetNode, Ledger } from './ledger.ts'
import { CHILD_EVENT, type ChildRecord, GRANT_EVENT, type GrantRecord } from './session-record.ts'

export { SubagentBudgetError } from '../../lib/errors.ts'
export type { BudgetRemaining }

declare module 'cordis' {
  interface Context {
    treeBudget: TreeBudget
  }
}

/** One admitted start, from `subagent/admit` until its run settles (or the start is abandoned). */
interface Ticket {
  readonly parent: Agent
  readonly parentNode: BudgetNode
  readonly node: BudgetNode
  /** The child's own reservation pool, when the request carried `budget`. */
  readonly reservation?: Pool
  readonly slot?: Slot
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
  readonly #tickets = new WeakMap<SubagentPlan, Ticket>()
  readonly #running = new Map<string, Ticket>()
  readonly #agents: Context['agents']
  readonly #events: Dispatch

  constructor(ctx: Context, config: TreeBudget.Config) {
    this.#config = config ?? {}
    const agents = ctx.agents
    this.#agents = agents
    this.#ledger = new Ledger(
      () => this.#config,
      (id) => agents.get(id),
    )
    this.#admission = new Admission(() => this.#config.maxConcurrent ?? TreeBudget.DEFAULT_MAX_CONCURRENT)
    const logger = ctx.logger('tree-budget')
    this.#events = new Dispatch(ctx.events, (error, event) => logger.warn(`a "${event}" listener failed: ${thrownMessage(error)}`))
    const fiber = ctx.fiber

    // a config update applies in place instead of restarting: what was spent lives with the trees
    ctx.on('internal/update', function (this: Fiber, next: unknown, noSave: boolean, core: () => unknown) {
      if (this !== fiber) return core()
      return budget.#update(next as TreeBudget.Config, this, noSave, core)
    } as never)
    const budget = this

    listenDirect(ctx, 'subagent/prepare', (plan) => {
      if (plan.request.budget !== undefined) plan.claim('budget', () => assertReservation(plan.request.budget))
      // a start the budget cannot pay for fails at once instead of after a wait in line
      this.#ledger.nodeOf(plan.request.parent).pool.assertCanStart(reservationOf(plan))
    })
    listenDirect(ctx, 'subagent/admit', (plan) => this.#admit(plan))
    listenDirect(ctx, 'subagent/abandon', (plan) => this.#abandon(plan))
    listenDirect(ctx, 'subagent/setup', (child, plan) => this.#bind(child, plan))
    listenDirect(ctx, 'subagent/settle', async (_result, run, next) => this.#settle(await next(), run))
    listenDirect(ctx, 'subagent/end', (info) => this.#end(info.childId))
    listenDirect(ctx, 'subagent/outlook', (outlook) => {
      const node = this.#ledger.nodeOf(outlook.agent)
      const remaining = node.pool.remainingAll()
      outlook.budget = remaining
      if (remaining.children <= 0) outlook.blockedBy = 'children'
      else if (remaining.tokens <= 0) outlook.blockedBy = 'tokens'
    })
    listenDirect(ctx, 'agent/pre-step', (agent, _info, next) => {
      const spent = this.#ledger.spentBeforeRequest(this.#ledger.nodeOf(agent))
      return spent ? { kind: 'budget', limit: spent.limit, used: spent.used, max: spent.max } : next()
    })
    // checked again where the request is sent: concurrent agents may have spent the rest meanwhile
    listenDirect(ctx, 'agent/model-request', (agent) => {
      // a node made just now was restored from the session, whose `step/start` already counts this request
      const isNew = this.#ledger.known(agent.session) === undefined
      const node = this.#ledger.nodeOf(agent)
      const spent = this.#ledger.spentBeforeRequest(node)
      if (spent) return { kind: 'budget', limit: spent.limit, used: spent.used, max: spent.max }
      if (!isNew) this.#ledger.chargeRequest(node)
    })
    listenDirect(ctx, 'session/event', (session, event) => {
      if (event.type !== 'assistant/message') return
      const usage = (event.data as { usage?: { inputTokens: number; outputTokens: number } }).usage
      if (!usage) return
      const node = this.#ledger.known(session)
      if (node) this.#ledger.chargeMessage(node, usage)
      else {
        // restored from the session, which already holds this message: counted exactly once
        const agent = agents.get(session.id)
        if (agent) this.#ledger.nodeOf(agent)
      }
    })
    listenDirect(ctx, 'agent/disposed', (agent) => {
      this.#admission.close(agent.id, () => new AgentDisposedError(agent.id))
    })
    ctx.effect(() => () => {
      // nothing will free a slot any more: queued starts go on, unmetered
      this.#admission.releaseAll()
      if (this.#running.size) logger.debug(`unloaded with ${this.#running.size} runs still metered`)
    }, 'tree-budget')
    ctx.provide('treeBudget', this)
  }

  /**
   * Usage of the subtree rooted at `agent`: its own and every descendant's message tokens, model
   * requests sent, and runs started below it. Counts from when the budget first heard of the tree.
   */
  usage(agent: Agent): TreeUsage {
    return { ...this.#ledger.nodeOf(agent).usage }
  }

  /**
   * What `agent`'s tree — or the reservation it lives under — has left of each limit (`Infinity`
   * where none applies), live reservations of other subtrees excluded. Never negative.
   */
  remaining(agent: Agent): BudgetRemaining {
    return this.#ledger.nodeOf(agent).pool.remainingAll()
  }

  #update(config: TreeBudget.Config, fiber: Fiber, _noSave: boolean, core: () => unknown): unknown {
    try {
      fiber.config = config
    } catch {
      return core()
    }
    this.#config = config ?? {}
    // a raised concurrency limit lets waiters in; a lowered budget stops new work at the next check
    this.#admission.drain()
    return undefined
  }

  async #admit(plan: SubagentPlan): Promise<void> {
    const { request } = plan
    const parent = request.parent
    const acquired = this.#admission.acquire(
      parent.id,
      request.signal,
      () => new SubagentError('ABORTED', abortedBeforePublication, { cause: request.signal.reason }),
    )
    const slot = acquired instanceof Promise ? await acquired : acquired
    try {
      const parentNode = this.#ledger.nodeOf(parent)
      const reservation = reservationOf(plan)
      // checked again: the tree may have spent more while this start waited
      parentNode.pool.assertCanStart(reservation)
      this.#ledger.chargeChild(parentNode, 1)
      const pool = reservation ? Pool.reserve(parentNode.pool, reservation) : undefined
      const node = this.#ledger.childNode(parentNode, pool ?? parentNode.pool)
      this.#tickets.set(plan, { parent, parentNode, node, ...(pool ? { reservation: pool } : {}), slot })
    } catch (error) {
      slot.release()
      throw error
    }
  }

  #abandon(plan: SubagentPlan): void {
    const ticket = this.#tickets.get(plan)
    if (!ticket) return
    this.#tickets.delete(plan)
    // a start that never created its child was not a run of the tree
    this.#ledger.chargeChild(ticket.parentNode, -1)
    this.#close(ticket)
  }

  #bind(child: Agent, plan: SubagentPlan): void {
    const ticket = this.#tickets.get(plan)
    if (!ticket) return
    this.#ledger.bind(child, ticket.node)
    this.#running.set(child.id, ticket)
    if (!this.#isPersisting()) return
    const tree = rootPool(ticket.node.pool)
    const grant: GrantRecord = {
      ...(plan.request.budget ? { reservation: { ...plan.request.budget } } : {}),
      treeSpent: { ...tree.spent },
    }
    child.session.append(GRANT_EVENT, grant)
  }

  #settle(result: SubagentResult, run: SubagentRun): SubagentResult {
    const ticket = this.#running.get(run.id)
    if (!ticket) return result
    const { inputTokens, outputTokens } = ticket.node.usage
    return { ...result, treeUsage: { inputTokens, outputTokens } }
  }

  #end(childId: string): void {
    const ticket = this.#running.get(childId)
    if (!ticket) return
    this.#running.delete(childId)
    this.#close(ticket)
    const { parent } = ticket
    const record: ChildRecord = { childId, usage: { ...ticket.node.usage } }
    // for a resumed parent: its file then holds what this subtree spent
    try {
      if (this.#isPersisting() && this.#agents.get(parent.id) === parent) parent.session.append(CHILD_EVENT, record)
    } catch {
      // a parent whose session is gone has no file to keep the record in
    }
  }

  /**
   * Whether a session store is loaded (something answers `session/load`): without one no session
   * can be resumed, so the budget records are not written and a parent's log does not grow.
   */
  #isPersisting(): boolean {
    return this.#events.has('session/load')
  }

  #close(ticket: Ticket): void {
    ticket.reservation?.close()
    ticket.slot?.release()
  }
}

function reservationOf(plan: SubagentPlan): BudgetReservation | undefined {
  const budget = plan.request.budget
  if (budget === undefined) return undefined
  assertReservation(budget)
  return budget
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
