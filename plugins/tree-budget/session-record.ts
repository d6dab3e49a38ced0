/**
 * What the budget writes into session files so that it holds across `resume` (SPEC §9), and how
 * it reads it back. Two event types, both JSON:
 *
 * - `budget/grant` in a child's own session, in its setup window: the reservation it was started
 *   with and what its tree had spent by then (its own start included).
 * - `budget/child` in the parent's session when a child's run settles: that child's subtree usage.
 *
 * - `budget/snapshot` in the session of every live agent the budget knows, when the plugin is
 *   unloaded: that agent's subtree usage so far (and, for an agent heading a tree, what the tree
 *   had spent), so that a reloaded budget starts from it.
 *
 * A resumed agent's subtree usage is its own `assistant/message` usage and `step/start` count
 * (one model request per step) plus the `budget/child` records, all after its seed — or after its
 * last snapshot, added to the snapshot's figures.
 */
import { assertReservation, type BudgetAmounts } from '../../lib/delegation/tree-budget.ts'
import { isEvent } from '../../lib/session/session-event.ts'
import type { BudgetReservation, SessionEvent, TreeUsage } from '../../lib/types.ts'

export const GRANT_EVENT = 'budget/grant'
export const CHILD_EVENT = 'budget/child'
export const SNAPSHOT_EVENT = 'budget/snapshot'

export interface GrantRecord {
  reservation?: BudgetReservation
  treeSpent: BudgetAmounts
}

export interface ChildRecord {
  childId: string
  usage: TreeUsage
  /**
   * The child's start (and whatever `usage` leaves out) is already in the parent's file — a child
   * whose run an unloaded budget admitted: `usage` is what it spent since, and counts no start.
   */
  continued?: true
}

export interface SnapshotRecord {
  /** The agent's subtree usage when the budget that wrote it was unloaded. */
  usage: TreeUsage
  /** What the agent's tree had spent then; only for an agent heading a tree. */
  treeSpent?: BudgetAmounts
  /** Children admitted by then but not yet published: their start is in `usage`, they have no snapshot. */
  started?: string[]
  /** The reservation the agent's subtree lives under, when it has one (a grant is written only with a store). */
  reservation?: BudgetReservation
}

/** What an agent's own part of a session says its subtree spent. */
export interface OwnRecord extends BudgetAmounts {
  usage: TreeUsage
  /** The last well-formed snapshot, whose figures `usage` starts from. */
  snapshot?: SnapshotRecord
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
  // the last snapshot holds everything before it: only what follows is summed
  const { snapshot, start } = lastSnapshot(events, seedLength)
  const usage: TreeUsage = snapshot ? { ...snapshot.usage } : { inputTokens: 0, outputTokens: 0, modelRequests: 0, children: 0 }
  for (let i = start; i < events.length; i++) {
    const event = events[i]
    if (isEvent(event, 'assistant/message')) {
      const tokens = event.data.usage
      if (tokens && isTokenCount(tokens.inputTokens) && isTokenCount(tokens.outputTokens)) {
        usage.inputTokens += tokens.inputTokens
        usage.outputTokens += tokens.outputTokens
      }
    } else if (event.type === 'step/start') usage.modelRequests++
    else if (event.type === CHILD_EVENT) {
      const data = event.data as Partial<ChildRecord> | null
      const child = data?.usage
      if (!isUsage(child)) continue
      usage.inputTokens += child.inputTokens
      usage.outputTokens += child.outputTokens
      usage.modelRequests += child.modelRequests
      usage.children += child.children + (data?.continued === true ? 0 : 1)
    }
  }
  const record: OwnRecord = { ...amountsOf(usage), usage }
  if (snapshot) record.snapshot = snapshot
  return record
}

/** The agent's last well-formed snapshot, and the index of the first event after it (or of its first own event). */
function lastSnapshot(events: readonly SessionEvent[], seedLength: number): { snapshot?: SnapshotRecord; start: number } {
  const from = Math.max(seedLength, 0)
  for (let i = events.length - 1; i >= from; i--) {
    if (events[i]!.type !== SNAPSHOT_EVENT) continue
    const snapshot = snapshotOf(events[i]!.data)
    if (snapshot) return { snapshot, start: i + 1 }
  }
  return { start: from }
}

/**
 * What the `continued` `budget/child` records of `childId` after the agent's last snapshot add
 * up to: what that child, live across a reload, spent beyond its own snapshot (a reloaded budget
 * writes them). Records before that snapshot are inside it, as they are inside the child's later
 * snapshot. A malformed record counts as none.
 */
export function continuedUsage(events: readonly SessionEvent[], seedLength: number, childId: string): TreeUsage {
  const usage: TreeUsage = { inputTokens: 0, outputTokens: 0, modelRequests: 0, children: 0 }
  for (let i = lastSnapshot(events, seedLength).start; i < events.length; i++) {
    const event = events[i]!
    if (event.type !== CHILD_EVENT) continue
    const data = event.data as Partial<ChildRecord> | null
    if (data?.childId !== childId || data.continued !== true || !isUsage(data.usage)) continue
    usage.inputTokens += data.usage.inputTokens
    usage.outputTokens += data.usage.outputTokens
    usage.modelRequests += data.usage.modelRequests
    usage.children += data.usage.children
  }
  return usage
}

/** What `total` holds beyond `part`, never negative (a record read back may disagree). */
export function usageBeyond(total: Readonly<TreeUsage>, part: Readonly<TreeUsage>): TreeUsage {
  return {
    inputTokens: Math.max(0, total.inputTokens - part.inputTokens),
    outputTokens: Math.max(0, total.outputTokens - part.outputTokens),
    modelRequests: Math.max(0, total.modelRequests - part.modelRequests),
    children: Math.max(0, total.children - part.children),
  }
}

/** A subtree usage as the amounts a pool counts. */
export function amountsOf(usage: Readonly<TreeUsage>): BudgetAmounts {
  return { tokens: usage.inputTokens + usage.outputTokens, modelRequests: usage.modelRequests, children: usage.children }
}

function isAmounts(value: unknown): value is BudgetAmounts {
  const amounts = value as Partial<BudgetAmounts> | null
  return typeof amounts === 'object' && amounts !== null && isCount(amounts.tokens) && isCount(amounts.modelRequests) && isCount(amounts.children)
}

/** A snapshot's data when well-formed (counts non-negative integers, `started` strings); otherwise none. */
function snapshotOf(data: unknown): SnapshotRecord | undefined {
  const record = data as Partial<SnapshotRecord> | null
  if (typeof record !== 'object' || record === null || !isUsage(record.usage)) return undefined
  if (record.treeSpent !== undefined && !isAmounts(record.treeSpent)) return undefined
  const started = record.started
  if (started !== undefined && !(Array.isArray(started) && started.every((id) => typeof id === 'string'))) return undefined
  // checked as a request's budget is, for the reason `grantOf` gives
  if (record.reservation !== undefined && !isReservation(record.reservation)) return undefined
  const snapshot: SnapshotRecord = { usage: record.usage }
  if (record.treeSpent) snapshot.treeSpent = record.treeSpent
  if (started) snapshot.started = started
  if (record.reservation) snapshot.reservation = record.reservation
  return snapshot
}

/**
 * How the agent's own part of its session counts `childId`: `'record'` — its subtree usage (a
 * `budget/child` record), `'start'` — only its start (a snapshot's `started`), or not at all.
 */
export function childCount(events: readonly SessionEvent[], seedLength: number, childId: string): 'record' | 'start' | undefined {
  for (let i = Math.max(seedLength, 0); i < events.length; i++) {
    const event = events[i]!
    if (event.type === CHILD_EVENT && (event.data as Partial<ChildRecord> | null)?.childId === childId) return 'record'
    if (event.type === SNAPSHOT_EVENT && snapshotOf(event.data)?.started?.includes(childId)) return 'start'
  }
  return undefined
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
