/**
 * What an agent could delegate now (SPEC §9): the facts the loaded policies report through
 * `subagent/outlook`, read by whoever shows them to the model or hides the delegation tool.
 */
import { lowerCap } from '../../lib/delegation/depth.ts'
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

  /** Lowers the cap to `cap`, like a plan's; a larger one keeps the current cap. Throws `TypeError` unless `cap` is a non-negative safe integer. */
  capDepth(cap: number): void {
    this.#depthCap = lowerCap(this.#depthCap, cap, 'subagent outlook depth cap')
  }

  get canStart(): boolean {
    return this.childDepth <= this.#depthCap && this.blockedBy === undefined
  }
}
