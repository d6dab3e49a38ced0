/**
 * The live agents by id, each with its handle and its place in the ownership tree.
 */
import type { AgentHandle } from '../../../lib/types.ts'
import type { HostAgent } from './agent.ts'

export interface AgentRecord {
  readonly agent: HostAgent
  readonly handle: AgentHandle
  /** Agents this one owns; made on first use. */
  children?: Set<AgentRecord>
  owner?: AgentRecord
  /** Removes the "dispose with the creating plugin" effect, for agents owned by a plugin. */
  release?: () => void
  disposal?: Promise<void>
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
