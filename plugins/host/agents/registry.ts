/**
 * The live agents by id, each with its place in the ownership tree.
 */
import type { AgentRecord } from './agent-record.ts'

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
