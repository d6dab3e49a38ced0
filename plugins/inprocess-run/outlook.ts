/**
 * What an agent could delegate now (SPEC §9): the facts the loaded policies report through
 * `subagent/outlook`, read by whoever shows them to the model or hides the delegation tool.
 */
import type { Agent, BudgetLimit, DelegationBudget, DelegationOutlook } from '../../lib/types.ts'

export class Outlook implements DelegationOutlook {
  #depthCap = Number.POSITIVE_INFINITY
  budget?: DelegationBudget
  blockedBy?: BudgetLimit

  constructor(
    readonly agent: Agent,
    readonly depth: number,
  ) {}

  get childDepth(): number {
    return this.depth + 1
  }

  get depthCap(): number {
    return this.#depthCap
  }

  /** Only ever lowered, like a plan's cap. */
  set depthCap(value: number) {
    if (typeof value === 'number' && !Number.isNaN(value) && value < this.#depthCap) this.#depthCap = value
  }

  get canStart(): boolean {
    return this.childDepth <= this.#depthCap && this.blockedBy === undefined
  }
}
