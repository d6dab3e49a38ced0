/**
 * The live agents by id, each with its handle and its place in the ownership tree.
 */
import type { HostAgent } from './agent.ts'
import { type DisposalServices, disposeAgent } from './disposal.ts'

/**
 * A live agent's bookkeeping; a class so every field has its slot from the start (no growth).
 * The fields are `declare`d and assigned in the constructor: field initializers (or parameter
 * properties) compile to a separate initializer function, one more call per creation (and one
 * more TurboFan job) while the first few thousand creations run as baseline code.
 */
export class AgentRecord {
  declare readonly agent: HostAgent
  /** Agents this one owns; made on first use. */
  declare children?: Set<AgentRecord>
  declare owner?: AgentRecord
  /** Removes the "dispose with the creating plugin" effect, for agents owned by a plugin. */
  declare release?: () => void
  declare disposal?: Promise<void>
  /** What its disposal needs: the host's, shared by every record. */
  private declare readonly services: DisposalServices

  constructor(agent: HostAgent, services: DisposalServices) {
    this.agent = agent
    this.services = services
    this.children = undefined
    this.owner = undefined
    this.release = undefined
    this.disposal = undefined
  }

  /**
   * Disposes the agent (`handle.dispose` is this method bound to the record): the first call starts
   * the disposal, every call returns it.
   */
  dispose(): Promise<void> {
    // `disposeAgent` itself, not a host closure that forwards to it: one call less per disposal
    return (this.disposal ??= disposeAgent(this, this.services))
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

  add(record: AgentRecord, owner: AgentRecord | undefined): void {
    this.#records.set(record.agent.id, record)
    if (owner) {
      record.owner = owner
      ;(owner.children ??= new Set()).add(record)
    }
  }

  remove(record: AgentRecord): void {
    this.#records.delete(record.agent.id)
    record.owner?.children?.delete(record)
  }
}
