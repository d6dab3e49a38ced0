/**
 * The live agents by id, each with its place in the ownership tree.
 */
import type { Context } from 'cordis'
import { AgentScope, kScope } from '../scope.ts'
import type { HostAgent } from './agent.ts'
import { type DisposalServices, disposeAgent } from './disposal.ts'

/**
 * An agent's scope with its bookkeeping: its place in the ownership tree and its disposal. One
 * object per agent, made with it (it is the agent's scope, `scopeOf(agent)`): a settled agent lives
 * as long as its caller holds it, and a record of its own beside the scope repeated the agent and
 * its owner in one more object (40 B a live agent). A class so every field has its slot from the
 * start (no growth). The bookkeeping is `#private`, read through accessors: a caller can reach an
 * agent's scope (through its symbol) and enumerate its own keys, which stay the scope's.
 */
export class AgentRecord extends AgentScope {
  declare readonly agent: HostAgent
  declare readonly owner: HostAgent | undefined
  /** What its disposal needs: the host's, shared by every record. */
  readonly #services: DisposalServices
  #children?: Set<AgentRecord>
  #release?: () => void
  #disposal?: Promise<void>

  constructor(agent: HostAgent, owner: HostAgent | undefined, callerCtx: Context, services: DisposalServices) {
    super(agent, owner, callerCtx)
    this.#services = services
  }

  /** Agents this one owns; made on first use. */
  get children(): Set<AgentRecord> | undefined { return this.#children }
  set children(value: Set<AgentRecord> | undefined) { this.#children = value }
  /** Removes the "dispose with the creating plugin" effect, for agents owned by a plugin. */
  get release(): (() => void) | undefined { return this.#release }
  set release(value: (() => void) | undefined) { this.#release = value }
  /** Its disposal, once started. */
  get disposal(): Promise<void> | undefined { return this.#disposal }

  /** The record of the agent that owns this one; `undefined` for an agent a plugin owns. */
  get ownerRecord(): AgentRecord | undefined {
    return this.owner?.[kScope]
  }

  /**
   * Disposes the agent (`handle.dispose` is this method bound to the record): the first call starts
   * the disposal, every call returns it.
   */
  dispose(): Promise<void> {
    // `disposeAgent` itself, not a host closure that forwards to it: one call less per disposal
    return (this.#disposal ??= disposeAgent(this, this.#services))
  }
}

/** Published agents. Adding links a record under its owner; removing unlinks it. */
export class AgentRegistry {
  readonly #records = new Map<string, AgentRecord>()

  get(id: string): AgentRecord | undefined {
    return this.#records.get(id)
  }

  has(id: string): boolean {
    return this.#records.has(id)
  }

  values(): IterableIterator<AgentRecord> {
    return this.#records.values()
  }

  /** True while `record` is the published one for its id and its disposal has not started. */
  isLive(record: AgentRecord): boolean {
    return !record.disposal && this.#records.get(record.agent.id) === record
  }

  add(record: AgentRecord): void {
    this.#records.set(record.agent.id, record)
    const owner = record.ownerRecord
    if (owner) (owner.children ??= new Set()).add(record)
  }

  remove(record: AgentRecord): void {
    this.#records.delete(record.agent.id)
    record.ownerRecord?.children?.delete(record)
  }
}
