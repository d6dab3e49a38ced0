/**
 * Budget arithmetic of a delegation tree (SPEC §9). Pure: no cordis, no I/O, no clocks.
 *
 * A `Pool` is what one budget allows: the tree's own (limits read live from the config) or a
 * reservation carved out of an enclosing pool for one child's subtree (fixed amounts). Every charge
 * made inside a pool also lands in each enclosing pool. A live reservation holds back its
 * outstanding part (reserved − spent inside it) from its enclosing pool, so "used" of a pool is
 * what was spent in it plus what its live reservations still hold.
 */
import { SubagentBudgetError } from '../errors.ts'
import type { BudgetLimit, BudgetReservation } from '../types.ts'

/** In the order a start checks them: the first short limit is the one reported. */
export const BUDGET_LIMITS: readonly BudgetLimit[] = Object.freeze(['children', 'tokens', 'modelRequests'])

const RESERVATION_FIELDS: readonly (keyof BudgetReservation)[] = ['tokens', 'modelRequests', 'children']

export type BudgetAmounts = Record<BudgetLimit, number>

/** What a budget has left; `Infinity` where no limit applies. */
export type BudgetRemaining = BudgetAmounts

function zero(): BudgetAmounts {
  return { children: 0, tokens: 0, modelRequests: 0 }
}

/** True for a safe integer ≥ 0 (NaN, fractions, negatives, ±Infinity and 2^53 are false). */
export function isBudgetAmount(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0
}

/**
 * Checks a request's `budget` (SPEC §9): `undefined` passes; otherwise an object whose present
 * fields are non-negative safe integers. Throws `TypeError` `subagent request budget must be an
 * object` or `subagent request budget.<field> must be a non-negative safe integer`, and
 * `subagent request budget has unknown field "<name>"` for anything else.
 */
export function assertReservation(value: unknown): asserts value is BudgetReservation | undefined {
  if (value === undefined) return
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError('subagent request budget must be an object')
  }
  for (const key of Object.keys(value)) {
    if (!(RESERVATION_FIELDS as readonly string[]).includes(key)) {
      throw new TypeError(`subagent request budget has unknown field ${JSON.stringify(key)}`)
    }
    const amount = (value as Record<string, unknown>)[key]
    if (amount !== undefined && !isBudgetAmount(amount)) {
      throw new TypeError(`subagent request budget.${key} must be a non-negative safe integer`)
    }
  }
}

/**
 * Two reservations as one (a definition's and a request's, SPEC §12): each limit is the smaller
 * of the two, and a limit only one of them sets is that one's. `undefined` when both are.
 */
export function smallerReservation(a: BudgetReservation | undefined, b: BudgetReservation | undefined): BudgetReservation | undefined {
  if (a === undefined) return b
  if (b === undefined) return a
  const merged: BudgetReservation = {}
  for (const key of RESERVATION_FIELDS) {
    const left = a[key]
    const right = b[key]
    const amount = left === undefined ? right : right === undefined ? left : Math.min(left, right)
    if (amount !== undefined) merged[key] = amount
  }
  return merged
}

/** The first limit that is spent (used ≥ max) in a pool, with its figures. */
export interface SpentLimit {
  limit: BudgetLimit
  used: number
  max: number
}

export class Pool {
  /** Spent inside this pool's subtree, reservations included. */
  readonly spent: BudgetAmounts = zero()
  /** Outstanding parts of this pool's live child reservations. */
  readonly held: BudgetAmounts = zero()
  #open = true

  /**
   * @param parent the enclosing pool (absent for a tree)
   * @param limits the pool's maximum per limit, `Infinity` where none applies; read on every check,
   *   so trees that share one object, updated in place, follow their config live
   * @param reserved the amounts carved from `parent` (a reservation), absent for a tree
   */
  constructor(
    readonly parent: Pool | undefined,
    private readonly limits: Readonly<BudgetAmounts>,
    readonly reserved?: Readonly<BudgetReservation>,
  ) {}

  /** A pool with fixed maximums carved out of `parent`; `parent` holds the amounts back until `close`. */
  static reserve(parent: Pool, reservation: Readonly<BudgetReservation>): Pool {
    const fixed = { ...reservation }
    const limits: BudgetAmounts = {
      children: fixed.children ?? Number.POSITIVE_INFINITY,
      tokens: fixed.tokens ?? Number.POSITIVE_INFINITY,
      modelRequests: fixed.modelRequests ?? Number.POSITIVE_INFINITY,
    }
    const pool = new Pool(parent, limits, fixed)
    for (const limit of BUDGET_LIMITS) parent.held[limit] += fixed[limit] ?? 0
    return pool
  }

  max(limit: BudgetLimit): number {
    return this.limits[limit]
  }

  /** Spent plus held back for live reservations. */
  used(limit: BudgetLimit): number {
    return this.spent[limit] + this.held[limit]
  }

  /** What this reservation still holds back from its parent (0 once closed, or for a tree). */
  outstanding(limit: BudgetLimit): number {
    const amount = this.#open ? this.reserved?.[limit] : undefined
    return amount === undefined ? 0 : Math.max(0, amount - this.spent[limit])
  }

  /** Charges `amount` here and in every enclosing pool, moving reserved parts into spent ones. */
  charge(limit: BudgetLimit, amount: number): void {
    if (amount === 0) return
    // a tree's own pool (no reservation above it): nothing is held back, nothing to move
    if (!this.parent) {
      this.spent[limit] += amount
      return
    }
    for (let pool: Pool | undefined = this; pool; pool = pool.parent) {
      const before = pool.outstanding(limit)
      pool.spent[limit] += amount
      if (pool.parent) pool.parent.held[limit] -= before - pool.outstanding(limit)
    }
  }

  /**
   * Sets what was spent here before a restart (a resumed session), without charging enclosing
   * pools: their own record already holds it. A reservation's held-back part follows.
   */
  restore(spent: Readonly<BudgetAmounts>): void {
    for (const limit of BUDGET_LIMITS) {
      const before = this.outstanding(limit)
      this.spent[limit] = spent[limit]
      if (this.parent) this.parent.held[limit] -= before - this.outstanding(limit)
    }
  }

  /** Ends a reservation: its unspent part returns to the parent. Idempotent; later charges still count. */
  close(): void {
    if (!this.#open || !this.parent) return
    for (const limit of BUDGET_LIMITS) this.parent.held[limit] -= this.outstanding(limit)
    this.#open = false
  }

  // The walks below are plain loops, not a generator: they run on every model request of every
  // agent in a tree. Seen from this subtree, a live reservation on the path back here is not
  // "elsewhere": each enclosing pool's used figure leaves out the outstanding part of the pool
  // below it on the path.

  /** What this subtree may still spend of `limit`: the tightest pool on the chain, never below 0. */
  remaining(limit: BudgetLimit): number {
    let left = Number.POSITIVE_INFINITY
    let inner: Pool | undefined
    for (let pool: Pool | undefined = this; pool; inner = pool, pool = pool.parent) {
      left = Math.min(left, pool.max(limit) - usedBelow(pool, inner, limit))
    }
    return Math.max(0, left)
  }

  /** What this subtree has left of every limit (`Infinity` where unlimited). */
  remainingAll(): BudgetRemaining {
    return { children: this.remaining('children'), tokens: this.remaining('tokens'), modelRequests: this.remaining('modelRequests') }
  }

  /** The innermost spent budget among `limits`, if any: checked before each model request. */
  spentLimit(limits: readonly BudgetLimit[]): SpentLimit | undefined {
    // indexed, not for…of: this runs twice per model request, and the iterator was not optimized away
    for (let index = 0; index < limits.length; index++) {
      const limit = limits[index]!
      let inner: Pool | undefined
      for (let pool: Pool | undefined = this; pool; inner = pool, pool = pool.parent) {
        const used = usedBelow(pool, inner, limit)
        const max = pool.max(limit)
        if (used >= max) return { limit, used, max }
      }
    }
    return undefined
  }

  /**
   * `spentLimit(['tokens', 'modelRequests'])`, written out with named fields: it runs before every
   * model request of every agent, where keyed reads (`spent[limit]`) and a number returned from
   * `max()` cost more than the comparisons themselves.
   */
  requestStop(): SpentLimit | undefined {
    let inner: Pool | undefined
    for (let pool: Pool | undefined = this; pool; inner = pool, pool = pool.parent) {
      const used = pool.spent.tokens + pool.held.tokens - (inner ? inner.outstanding('tokens') : 0)
      if (used >= pool.limits.tokens) return { limit: 'tokens', used, max: pool.limits.tokens }
    }
    inner = undefined
    for (let pool: Pool | undefined = this; pool; inner = pool, pool = pool.parent) {
      const used = pool.spent.modelRequests + pool.held.modelRequests - (inner ? inner.outstanding('modelRequests') : 0)
      if (used >= pool.limits.modelRequests) return { limit: 'modelRequests', used, max: pool.limits.modelRequests }
    }
    return undefined
  }

  /**
   * Checks that a child may start here with `reservation` (SPEC §9). Throws `SubagentBudgetError`
   * for the first short limit in `BUDGET_LIMITS` order, innermost pool first: a start needs one
   * child plus the reserved children; tokens and model requests must not be spent, and must cover
   * what is reserved.
   */
  assertCanStart(reservation: Readonly<BudgetReservation> | undefined): void {
    // the common start (no reservation, nothing near a limit) passes on named fields alone
    if (reservation === undefined && this.#fitsOneChild()) return
    for (let index = 0; index < BUDGET_LIMITS.length; index++) {
      const limit = BUDGET_LIMITS[index]!
      const reserved = reservation?.[limit]
      const need = limit === 'children' ? 1 + (reserved ?? 0) : (reserved ?? 0)
      let inner: Pool | undefined
      for (let pool: Pool | undefined = this; pool; inner = pool, pool = pool.parent) {
        const used = usedBelow(pool, inner, limit)
        const max = pool.max(limit)
        const short = limit === 'children' ? used + need > max : used >= max || used + need > max
        if (short) throw new SubagentBudgetError(limit, used, max)
      }
    }
  }

  /** True when one more child without a reservation fits every pool on the chain (see `assertCanStart`). */
  #fitsOneChild(): boolean {
    if (this.requestStop()) return false
    let inner: Pool | undefined
    for (let pool: Pool | undefined = this; pool; inner = pool, pool = pool.parent) {
      const used = pool.spent.children + pool.held.children - (inner ? inner.outstanding('children') : 0)
      if (used + 1 > pool.limits.children) return false
    }
    return true
  }
}

/** `pool`'s used figure of `limit` as the subtree below `inner` (a pool it encloses) sees it. */
function usedBelow(pool: Pool, inner: Pool | undefined, limit: BudgetLimit): number {
  return pool.used(limit) - (inner ? inner.outstanding(limit) : 0)
}
