/**
 * What one admitted start holds (a slot of its parent's lane, a reservation) until its run
 * settles: the `RunTicket` the budget hands the driver at `subagent/admit`.
 */
import type { Pool } from '../../lib/tree-budget.ts'
import type { Agent, BudgetReservation, RunTicket, Usage } from '../../lib/types.ts'
import type { Lane } from './admission.ts'
import type { BudgetNode } from './ledger.ts'

export class BudgetTicket implements RunTicket {
  /**
   * @param node the child's node, booked before the child exists
   * @param reservation the child's own reservation pool, when the request carried `budget`
   * @param reserved the reservation as requested, for the grant record
   * @param slot the parent's lane, whose slot the run holds
   * @param end gives everything back, once (the budget's own bookkeeping)
   */
  constructor(
    readonly node: BudgetNode,
    readonly parent: Agent,
    readonly parentNode: BudgetNode,
    readonly reservation: Pool | undefined,
    readonly reserved: BudgetReservation | undefined,
    readonly slot: Lane,
    private readonly end: (node: BudgetNode) => void,
  ) {}

  /** The run leaves the count (SPEC §9: when its result settles); answers the subtree's tokens as `treeUsage`. */
  settled(): Usage {
    const node = this.node
    this.end(node)
    return { inputTokens: node.usage.inputTokens, outputTokens: node.usage.outputTokens }
  }
}
