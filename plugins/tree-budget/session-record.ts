/**
 * What the budget writes into session files so that it holds across `resume` (SPEC §9), and how
 * it reads it back. Two event types, both JSON:
 *
 * - `budget/grant` in a child's own session, in its setup window: the reservation it was started
 *   with and what its tree had spent by then (its own start included).
 * - `budget/child` in the parent's session when a child's run settles: that child's subtree usage.
 *
 * A resumed agent's subtree usage is its own `assistant/message` usage and `step/start` count
 * (one model request per step) plus the `budget/child` records, all after its seed.
 */
import { assertReservation, type BudgetAmounts } from '../../lib/tree-budget.ts'
import { isEvent } from '../../lib/session-event.ts'
import type { BudgetReservation, SessionEvent, TreeUsage } from '../../lib/types.ts'

export const GRANT_EVENT = 'budget/grant'
export const CHILD_EVENT = 'budget/child'

export interface GrantRecord {
  reservation?: BudgetReservation
  treeSpent: BudgetAmounts
}

export interface ChildRecord {
  childId: string
  usage: TreeUsage
}

/** What an agent's own part of a session says its subtree spent. */
export interface OwnRecord extends BudgetAmounts {
  usage: TreeUsage
}

function isCount(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0
}

/** A message's token count as the host's loop accepts one: a non-negative finite number. */
function isTokenCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0
}

function isUsage(value: unknown): value is TreeUsage {
  const usage = value as Partial<TreeUsage> | null
  return (
    typeof usage === 'object' &&
    usage !== null &&
    isCount(usage.inputTokens) &&
    isCount(usage.outputTokens) &&
    isCount(usage.modelRequests) &&
    isCount(usage.children)
  )
}

/**
 * Sums the agent's own events (index `seedLength` on); a malformed budget record, or a message
 * usage whose counts are not non-negative finite numbers (a file read back), is skipped: a NaN
 * would leave a limit never spent, a negative count would hand the tree back what it spent.
 */
export function ownRecord(events: readonly SessionEvent[], seedLength: number): OwnRecord {
  const usage: TreeUsage = { inputTokens: 0, outputTokens: 0, modelRequests: 0, children: 0 }
  for (let i = Math.max(seedLength, 0); i < events.length; i++) {
    const event = events[i]
    if (isEvent(event, 'assistant/message')) {
      const tokens = event.data.usage
      if (tokens && isTokenCount(tokens.inputTokens) && isTokenCount(tokens.outputTokens)) {
        usage.inputTokens += tokens.inputTokens
        usage.outputTokens += tokens.outputTokens
      }
    } else if (event.type === 'step/start') usage.modelRequests++
    else if (event.type === CHILD_EVENT) {
      const child = (event.data as Partial<ChildRecord> | null)?.usage
      if (!isUsage(child)) continue
      usage.inputTokens += child.inputTokens
      usage.outputTokens += child.outputTokens
      usage.modelRequests += child.modelRequests
      usage.children += child.children + 1
    }
  }
  return { tokens: usage.inputTokens + usage.outputTokens, modelRequests: usage.modelRequests, children: usage.children, usage }
}

function isReservation(value: unknown): value is BudgetReservation {
  try {
    assertReservation(value)
    return true
  } catch {
    return false
  }
}

/** The agent's own grant record, if it has a well-formed one (its reservation as a request's `budget` must be). */
export function grantOf(events: readonly SessionEvent[], seedLength: number): GrantRecord | undefined {
  for (let i = Math.max(seedLength, 0); i < events.length; i++) {
    const event = events[i]
    if (event.type !== GRANT_EVENT) continue
    const data = event.data as Partial<GrantRecord> | null
    const spent = data?.treeSpent
    if (!spent || !isCount(spent.tokens) || !isCount(spent.modelRequests) || !isCount(spent.children)) return undefined
    const reservation = data?.reservation
    if (reservation === undefined) return { treeSpent: spent }
    // checked as a request's budget is: a negative amount read back would hand its parent's tree
    // more than it has, so a record that breaks the rules counts as no record
    return isReservation(reservation) ? { reservation, treeSpent: spent } : undefined
  }
  return undefined
}
