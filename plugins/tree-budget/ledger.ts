/**
 * Who belongs to which tree, what each subtree used, and which budget pays for it (SPEC §9).
 * Every agent gets a node the first time the budget hears of it; a node charges its pool (the
 * tree's, or the reservation it lives under) and adds to its own and every ancestor's usage.
 */
import { type BudgetAmounts, Pool, type SpentLimit } from '../../lib/delegation/tree-budget.ts'
import type { Agent, BudgetReservation, RunTicket, TreeUsage, Usage } from '../../lib/types.ts'
import { amountsOf, childCount, continuedUsage, grantOf, usageBeyond, type OwnRecord, ownRecord } from './session-record.ts'
import type { Lane } from './admission.ts'

/**
 * One agent's place in its tree, and — from admission until the run settles — the `RunTicket` its
 * run holds: node, usage and ticket are one object, so a start allocates one of them (the three
 * separate objects weighed on the Node 22 cycle, about half as long as Node 20's).
 */
export class BudgetNode implements TreeUsage, RunTicket {
  // the subtree's usage, this agent's own included (the `TreeUsage` fields, counted in place)
  inputTokens = 0
  outputTokens = 0
  modelRequests = 0
  children = 0
  /** The parent agent of an admitted run, while the run holds its ticket; `undefined` otherwise. */
  holder: Agent | undefined = undefined
  /** The parent's lane whose slot the run holds, while it does. */
  slot: Lane | undefined = undefined
  /**
   * The run's own reservation pool, when its request carried `budget`; for a resumed child of a
   * live parent, the reservation rebuilt from its grant record (no ticket: closed at its disposal).
   */
  reservation: Pool | undefined = undefined
  /** The reservation as requested, for the grant record. */
  reserved: BudgetReservation | undefined = undefined
  /** This agent's own lane of slots, once it started a child (cached: no map lookup per start). */
  lane: Lane | undefined = undefined
  /** Restored from a `budget/snapshot` (its tree lived under a budget that was unloaded). */
  reloaded = false

  /**
   * @param agentId the agent's id (an admitted child's before the child exists)
   * @param parent the parent's node, absent for a root or a resumed agent without a live parent
   * @param pool the budget this agent spends from: its tree's, or the nearest reservation above it
   * @param end the budget's bookkeeping when the run leaves the count (shared by every node);
   *   false once the budget stopped counting (its plugin was unloaded)
   */
  constructor(
    readonly agentId: string,
    readonly parent: BudgetNode | undefined,
    readonly pool: Pool,
    private readonly end: (node: BudgetNode) => boolean,
  ) {}

  /** Whether an admitted run still holds its ticket (a slot, maybe a reservation). */
  get holding(): boolean {
    return this.slot !== undefined
  }

  /** A copy of the subtree's usage. */
  usage(): TreeUsage {
    return { inputTokens: this.inputTokens, outputTokens: this.outputTokens, modelRequests: this.modelRequests, children: this.children }
  }

  /**
   * The run leaves the count (SPEC §9: when its result settles); answers the subtree's tokens as
   * `treeUsage`, or nothing when the budget stopped counting before (unloaded mid-run): the
   * messages after its unload were never counted, so its figure would be short.
   */
  settled(): Usage | undefined {
    if (!this.end(this)) return undefined
    return { inputTokens: this.inputTokens, outputTokens: this.outputTokens }
  }
}

export interface TreeLimits {
  maxChildren?: number
  maxTokens?: number
  maxModelRequests?: number
}

function addUsage(target: TreeUsage, usage: Readonly<TreeUsage>): void {
  target.inputTokens += usage.inputTokens
  target.outputTokens += usage.outputTokens
  target.modelRequests += usage.modelRequests
  target.children += usage.children
}

export class Ledger {
  // live agents only, by id: one map entry per child from its admission to its disposal (a
  // WeakMap keyed by the session cost more per child than the rest of the bookkeeping together)
  readonly #nodes = new Map<string, BudgetNode>()
  // the child booked last, kept out of the map until the next booking: children started one at a
  // time (the common case) never touch the map, whose insertion and removal of a fresh key cost
  // more than all the rest of a child's bookkeeping
  #newest: BudgetNode | undefined
  // the node found in the map last (a parent starting children one after another): its next
  // start finds it without a map lookup
  #lastFound: BudgetNode | undefined
  /**
   * Agents whose nodes are being restored, innermost last: a resumed header may name a live agent
   * up its own chain as its parent (a hand-edited file naming itself, two files naming each
   * other), and restoring that parent would restore this agent again, without end.
   */
  readonly #restoring = new Set<string>()

  // one object shared by every tree's pool and updated in place: a check reads a field, not the config
  readonly #treeLimits: BudgetAmounts = { children: Number.POSITIVE_INFINITY, tokens: Number.POSITIVE_INFINITY, modelRequests: Number.POSITIVE_INFINITY }

  /**
   * @param limits the config's limits (see `setLimits`)
   * @param liveAgent the published agent with this id, if any (for a resumed agent's parent)
   * @param liveAgents every published agent (to adopt a tree's live agents after a reload)
   * @param end what an admitted child's `settled()` calls (see `BudgetNode`)
   * @param adopted told of each live agent of a reloaded tree that joins its parent's node here:
   *   a run an earlier budget admitted, which holds no ticket of this one; with what of its
   *   subtree its parent's file already holds, and whether that includes its start
   */
  constructor(
    limits: TreeLimits,
    private readonly liveAgent: (id: string) => Agent | undefined,
    private readonly liveAgents: () => Iterable<Agent>,
    private readonly end: (node: BudgetNode) => boolean,
    private readonly adopted: (node: BudgetNode, agent: Agent, counted: Readonly<TreeUsage>, startCounted: boolean) => void,
  ) {
    this.setLimits(limits)
  }

  /** Applies a config's limits to every tree, at its next check; what trees spent stays. Absent = unlimited. */
  setLimits(limits: TreeLimits): void {
    const unlimited = Number.POSITIVE_INFINITY
    this.#treeLimits.children = limits.maxChildren ?? unlimited
    this.#treeLimits.tokens = limits.maxTokens ?? unlimited
    this.#treeLimits.modelRequests = limits.maxModelRequests ?? unlimited
  }

  /** A fresh tree's pool, following the config live. */
  treePool(): Pool {
    return new Pool(undefined, this.#treeLimits)
  }

  /**
   * The agent's node, made on first use: a root starts a tree, a resumed agent is restored. A
   * disposed agent's figures are read back from its session each time (see README, Known limits).
   */
  nodeOf(agent: Agent): BudgetNode {
    return this.known(agent.id) ?? this.#restore(agent)
  }

  /** The node of a live agent (or an admitted child) the budget already knows, without making one. */
  known(agentId: string): BudgetNode | undefined {
    const newest = this.#newest
    if (newest !== undefined && newest.agentId === agentId) return newest
    const last = this.#lastFound
    if (last !== undefined && last.agentId === agentId) return last
    const found = this.#nodes.get(agentId)
    if (found !== undefined) this.#lastFound = found
    return found
  }

  /** An admitted child's node, before the child exists (it gets the id `childId`): it spends from `pool`. */
  childNode(parent: BudgetNode, pool: Pool, childId: string): BudgetNode {
    const node = new BudgetNode(childId, parent, pool, this.end)
    const previous = this.#newest
    if (previous !== undefined) this.#nodes.set(previous.agentId, previous)
    this.#newest = node
    return node
  }

  /** Every node kept: live agents' and admitted children's. */
  nodes(): BudgetNode[] {
    const nodes = [...this.#nodes.values()]
    if (this.#newest !== undefined) nodes.push(this.#newest)
    return nodes
  }

  /** Drops the node of an agent that is gone (or a child that was never created). */
  forget(agentId: string): void {
    if (this.#lastFound?.agentId === agentId) this.#lastFound = undefined
    if (this.#newest?.agentId === agentId) this.#newest = undefined
    else this.#nodes.delete(agentId)
  }

  /** Counts one `assistant/message`'s usage, once, on the agent and every ancestor. */
  chargeMessage(node: BudgetNode, usage: Usage): void {
    for (let at: BudgetNode | undefined = node; at; at = at.parent) {
      at.inputTokens += usage.inputTokens
      at.outputTokens += usage.outputTokens
    }
    node.pool.charge('tokens', usage.inputTokens + usage.outputTokens)
  }

  /** Counts one model request as it is sent. */
  chargeRequest(node: BudgetNode): void {
    for (let at: BudgetNode | undefined = node; at; at = at.parent) at.modelRequests++
    node.pool.charge('modelRequests', 1)
  }

  /** Counts (or, with -1, gives back) one started child of `parent`. */
  chargeChild(parent: BudgetNode, count: 1 | -1): void {
    for (let at: BudgetNode | undefined = parent; at; at = at.parent) at.children += count
    parent.pool.charge('children', count)
  }

  /**
   * Gives back the start of `childId`, a child of the live `parent` that an unloaded budget
   * admitted and counted (a snapshot of the parent names it in `started`) and whose creation then
   * failed: that budget's `subagent/abandon` listener is gone. Anything else is left as it is.
   */
  abandonStarted(parent: Agent, childId: string): void {
    if (this.known(childId) || this.liveAgent(parent.id) !== parent) return
    const node = this.nodeOf(parent)
    // only a parent restored from a snapshot can name one: a start refused here reads no file
    if (!node.reloaded || childCount(parent.session.events, parent.session.header.seedLength ?? 0, childId) !== 'start') return
    this.chargeChild(node, -1)
  }

  /** The budget that is spent for this agent's next model request, if any. */
  spentBeforeRequest(node: BudgetNode): SpentLimit | undefined {
    return node.pool.requestStop()
  }

  /**
   * A node for an agent the budget never saw start: a root (no `parentSession`) begins a fresh
   * tree; a resumed child keeps what its session file says it had (SPEC §9, the resume rule in
   * README): joined to its live parent's tree, or else a tree of its own that starts from what
   * the tree had spent when the child was granted, plus what the child's subtree spent since.
   */
  #restore(agent: Agent): BudgetNode {
    this.#restoring.add(agent.id)
    try {
      return this.#restoreNode(agent)
    } finally {
      this.#restoring.delete(agent.id)
    }
  }

  #restoreNode(agent: Agent): BudgetNode {
    const { header, events } = agent.session
    const seedLength = header.seedLength ?? 0
    const record = ownRecord(events, seedLength)
    const live = this.liveAgent(agent.id) === agent
    if (header.parentSession !== undefined) {
      // a parent being restored further down this chain closes a cycle: this agent then starts a tree of its own
      const liveParent = this.#restoring.has(header.parentSession) ? undefined : this.liveAgent(header.parentSession)
      if (liveParent) {
        const parent = this.nodeOf(liveParent)
        // restoring the parent's tree may have adopted this agent already (see `#adoptLive`)
        const adopted = live ? this.known(agent.id) : undefined
        if (adopted) return adopted
        const node = this.#joinNode(agent, record, parent, liveParent, live)
        // the walk from the tree's head skipped this agent (it was being restored), and so its subtree
        if (live && (node.reloaded || parent.reloaded)) this.#adoptLive(node, agent)
        return node
      }
    }
    const snapshot = record.snapshot
    // what the tree had spent outside this agent's subtree: nothing for a root; for a resumed
    // child heading a tree of its own, what its grant (or a later snapshot) says
    let outside: BudgetAmounts = { tokens: 0, modelRequests: 0, children: 0 }
    let reservation: BudgetReservation | undefined
    if (header.parentSession !== undefined) {
      const grant = grantOf(events, seedLength)
      reservation = record.snapshot?.reservation ?? grant?.reservation
      if (grant) outside = { ...grant.treeSpent }
    }
    if (snapshot?.treeSpent) outside = difference(snapshot.treeSpent, amountsOf(snapshot.usage))
    const tree = this.treePool()
    tree.restore(outside)
    const pool = reservation ? Pool.reserve(tree, reservation) : tree
    pool.charge('tokens', record.tokens)
    pool.charge('modelRequests', record.modelRequests)
    pool.charge('children', record.children)
    const node = new BudgetNode(agent.id, undefined, pool, this.end)
    addUsage(node, record.usage)
    node.reserved = reservation
    node.reloaded = snapshot !== undefined
    if (!live) return node
    // only a live agent's node is kept: nothing would ever drop another one
    this.#nodes.set(agent.id, node)
    // an earlier budget was unloaded while this tree lived: its live agents go on spending, and
    // what they spent since their snapshots is in their own sessions, not in this one
    if (snapshot) this.#adoptLive(node, agent)
    return node
  }

  /**
   * The node of `agent` joining the live tree of `parent`: what the parent's counts already hold
   * of its subtree (a `budget/child` record or a snapshot of its own) is restored, the rest — and
   * its start, when no count holds it — is charged to the tree. A disposed agent's node is a
   * reading only: nothing is charged, and its rebuilt reservation holds nothing back.
   */
  #joinNode(agent: Agent, record: OwnRecord, parent: BudgetNode, parentAgent: Agent, live: boolean): BudgetNode {
    const seedLength = agent.session.header.seedLength ?? 0
    const grant = grantOf(agent.session.events, seedLength)
    const parentSeed = parentAgent.session.header.seedLength ?? 0
    // a disposed agent's reading restores all of it; a live one, what its snapshot or its
    // parent's record covers (a resumed child's run settled with a `budget/child` record)
    let counted: Readonly<TreeUsage> | undefined
    let count: 'record' | 'start' | undefined
    if (!live) counted = record.usage
    else if (record.snapshot) {
      // a reloaded budget wrote what it spent beyond its snapshot into the parent's file when it
      // went idle: the parent's counts hold that too (counting it again would charge it twice on resume)
      counted = { ...record.snapshot.usage }
      addUsage(counted, continuedUsage(parentAgent.session.events, parentSeed, agent.id))
    } else {
      count = childCount(parentAgent.session.events, parentSeed, agent.id)
      if (count) counted = count === 'record' ? record.usage : ZERO_USAGE
    }
    // a start no count holds (a child let out of the queue when an earlier budget was unloaded)
    if (!counted) this.chargeChild(parent, 1)
    // the snapshot's is the newer, and the only one without a session store
    const reservation = record.snapshot?.reservation ?? grant?.reservation
    const pool = reservation ? Pool.reserve(parent.pool, reservation) : parent.pool
    if (pool !== parent.pool) pool.restore(amountsOf(counted ?? ZERO_USAGE))
    const node = new BudgetNode(agent.id, parent, pool, this.end)
    addUsage(node, record.usage)
    node.reserved = reservation
    if (!live) {
      if (pool !== parent.pool) pool.close()
      return node
    }
    const since = counted ? usageBeyond(record.usage, counted) : record.usage
    for (let at: BudgetNode | undefined = parent; at; at = at.parent) addUsage(at, since)
    pool.charge('tokens', since.inputTokens + since.outputTokens)
    pool.charge('modelRequests', since.modelRequests)
    pool.charge('children', since.children)
    // a reservation rebuilt under a live parent holds part of that parent's tree back: it goes
    // back when the child is disposed (see `TreeBudget`), no run ticket does it
    if (pool !== parent.pool) node.reservation = pool
    node.reloaded = record.snapshot !== undefined
    this.#nodes.set(agent.id, node)
    // started under an unloaded budget: with a snapshot, published after the unload (`started`),
    // or let out of its queue at the unload; a resumed child whose run settled is none of these
    if (node.reloaded || (parent.reloaded && count !== 'record')) this.adopted(node, agent, counted ?? ZERO_USAGE, counted !== undefined)
    return node
  }

  /** Gives a node to every live agent below `head` the budget does not know yet, parents first. */
  #adoptLive(head: BudgetNode, headAgent: Agent): void {
    const byParent = new Map<string, Agent[]>()
    for (const agent of this.liveAgents()) {
      const parentId = agent.session.header.parentSession
      if (parentId === undefined) continue
      const siblings = byParent.get(parentId)
      if (siblings) siblings.push(agent)
      else byParent.set(parentId, [agent])
    }
    const pending: [BudgetNode, Agent][] = [[head, headAgent]]
    for (let next = pending.pop(); next; next = pending.pop()) {
      const [node, agent] = next
      for (const child of byParent.get(agent.id) ?? []) {
        if (this.known(child.id) || this.#restoring.has(child.id)) continue
        const record = ownRecord(child.session.events, child.session.header.seedLength ?? 0)
        pending.push([this.#joinNode(child, record, node, agent, true), child])
      }
    }
  }
}

const ZERO_USAGE: Readonly<TreeUsage> = Object.freeze({ inputTokens: 0, outputTokens: 0, modelRequests: 0, children: 0 })

function difference(total: Readonly<BudgetAmounts>, part: Readonly<BudgetAmounts>): BudgetAmounts {
  return {
    tokens: Math.max(0, total.tokens - part.tokens),
    modelRequests: Math.max(0, total.modelRequests - part.modelRequests),
    children: Math.max(0, total.children - part.children),
  }
}
