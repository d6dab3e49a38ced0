import { expect } from 'chai'
import { SubagentBudgetError } from '../../../lib/errors.ts'
import { assertReservation, isBudgetAmount, Pool } from '../../../lib/delegation/tree-budget.ts'
import type { BudgetLimit } from '../../../lib/types.ts'

function limitsOf(limits: Partial<Record<BudgetLimit, number>>): Record<BudgetLimit, number> {
  const unlimited = Number.POSITIVE_INFINITY
  return { children: limits.children ?? unlimited, tokens: limits.tokens ?? unlimited, modelRequests: limits.modelRequests ?? unlimited }
}

function tree(limits: Partial<Record<BudgetLimit, number>>): Pool {
  return new Pool(undefined, limitsOf(limits))
}

function budgetError(fn: () => void): SubagentBudgetError {
  try {
    fn()
  } catch (error) {
    expect(error).to.be.instanceOf(SubagentBudgetError)
    return error as SubagentBudgetError
  }
  throw new Error('expected a SubagentBudgetError')
}

describe('tree budget arithmetic (lib/delegation/tree-budget.ts)', () => {
  it('reports every limit as Infinity in a tree without limits', () => {
    expect(tree({}).remainingAll()).to.deep.equal({ children: Infinity, tokens: Infinity, modelRequests: Infinity })
  })

  it('follows limits changed in place, keeping what was spent', () => {
    const limits = limitsOf({ tokens: 100 })
    const root = new Pool(undefined, limits)
    root.charge('tokens', 60)
    limits.tokens = 50
    expect(root.spentLimit(['tokens'])).to.deep.equal({ limit: 'tokens', used: 60, max: 50 })
    limits.tokens = 80
    expect([root.spentLimit(['tokens']), root.remaining('tokens')]).to.deep.equal([undefined, 20])
  })

  it('reports the same spent limit before a request as spentLimit over tokens then model requests', () => {
    const cases: Pool[] = []
    for (const [tokens, requests] of [
      [0, 0],
      [99, 4],
      [100, 0],
      [0, 5],
      [100, 5],
    ] as const) {
      const root = tree({ tokens: 100, modelRequests: 5 })
      const reserved = Pool.reserve(root, { tokens: 30, modelRequests: 2 })
      const nested = Pool.reserve(reserved, { modelRequests: 1 })
      Pool.reserve(root, { tokens: 20 })
      root.charge('tokens', Math.min(tokens, 50))
      nested.charge('modelRequests', Math.min(requests, 1))
      reserved.charge('tokens', Math.max(0, tokens - 50))
      root.charge('modelRequests', Math.max(0, requests - 1))
      cases.push(root, reserved, nested)
    }
    const spent = cases.map((pool) => pool.requestStop())
    expect(spent).to.deep.equal(cases.map((pool) => pool.spentLimit(['tokens', 'modelRequests'])))
    expect(spent.filter((limit) => limit !== undefined).length).to.be.greaterThan(3)
  })

  it('accepts only non-negative safe integers as amounts', () => {
    expect([0, 1, Number.MAX_SAFE_INTEGER].map(isBudgetAmount)).to.deep.equal([true, true, true])
    expect([-1, 1.5, Number.NaN, 2 ** 53, Infinity, '1'].map(isBudgetAmount)).to.deep.equal([false, false, false, false, false, false])
  })

  it('holds a reservation back from its tree until it closes, then returns the unspent part', () => {
    const root = tree({ tokens: 100 })
    const reserved = Pool.reserve(root, { tokens: 40 })
    expect(root.remaining('tokens')).to.equal(60)
    reserved.charge('tokens', 15)
    expect(root.remaining('tokens')).to.equal(60)
    expect(reserved.remaining('tokens')).to.equal(25)
    reserved.close()
    expect(root.remaining('tokens')).to.equal(85)
  })

  it('counts spending beyond a closed reservation in the tree', () => {
    const root = tree({ tokens: 100 })
    const reserved = Pool.reserve(root, { tokens: 10 })
    reserved.close()
    reserved.charge('tokens', 30)
    expect(root.used('tokens')).to.equal(30)
  })

  it('lets a subtree see its own reservation but not the reservations of its siblings', () => {
    const root = tree({ tokens: 100 })
    const mine = Pool.reserve(root, { tokens: 30 })
    Pool.reserve(root, { tokens: 50 })
    expect(mine.remaining('tokens')).to.equal(30)
    expect(root.remaining('tokens')).to.equal(20)
  })

  it('reports the innermost spent budget with its own figures', () => {
    const root = tree({ tokens: 100 })
    const reserved = Pool.reserve(root, { tokens: 10 })
    reserved.charge('tokens', 12)
    expect(reserved.spentLimit(['tokens', 'modelRequests'])).to.deep.equal({ limit: 'tokens', used: 12, max: 10 })
    expect(root.spentLimit(['tokens'])).to.equal(undefined)
  })

  it('rejects a start beyond maxChildren with the children figures', () => {
    const root = tree({ children: 2 })
    root.charge('children', 2)
    const error = budgetError(() => root.assertCanStart(undefined))
    expect([error.limit, error.used, error.max, error.message]).to.deep.equal(['children', 2, 2, 'subagent budget exhausted: children 2 of 2'])
  })

  it('rejects a start in a tree whose tokens are spent', () => {
    const root = tree({ tokens: 10 })
    root.charge('tokens', 10)
    expect(budgetError(() => root.assertCanStart(undefined)).message).to.equal('subagent budget exhausted: tokens 10 of 10')
  })

  it('counts what other reservations hold as used when a reservation does not fit', () => {
    const root = tree({ tokens: 100 })
    root.charge('tokens', 20)
    Pool.reserve(root, { tokens: 50 })
    expect(budgetError(() => root.assertCanStart({ tokens: 40 })).message).to.equal('subagent budget exhausted: tokens 70 of 100')
  })

  it('names the first short limit, in the order children, tokens, model requests, when a reservation is short of several', () => {
    const root = tree({ children: 1, tokens: 10, modelRequests: 5 })
    const limitShort = (reservation: Parameters<Pool['assertCanStart']>[0]) => budgetError(() => root.assertCanStart(reservation)).limit
    expect([
      limitShort({ tokens: 20, modelRequests: 6, children: 1 }),
      limitShort({ tokens: 20, modelRequests: 6 }),
      limitShort({ modelRequests: 6 }),
    ]).to.deep.equal(['children', 'tokens', 'modelRequests'])
  })

  it('needs one child more than the reserved children', () => {
    const root = tree({ children: 3 })
    expect(() => root.assertCanStart({ children: 2 })).not.to.throw()
    expect(budgetError(() => root.assertCanStart({ children: 3 })).message).to.equal('subagent budget exhausted: children 0 of 3')
  })

  it('gives back a charge with a negative amount', () => {
    const root = tree({ children: 1 })
    root.charge('children', 1)
    root.charge('children', -1)
    expect(root.remaining('children')).to.equal(1)
  })

  it('restores what a resumed reservation had spent without charging the tree twice', () => {
    const root = tree({ tokens: 100 })
    // the live tree counted the subtree's 25 tokens before the child was resumed
    root.charge('tokens', 25)
    const reserved = Pool.reserve(root, { tokens: 40 })
    reserved.restore({ tokens: 25, modelRequests: 0, children: 0 })
    expect([reserved.remaining('tokens'), root.remaining('tokens'), root.spent.tokens]).to.deep.equal([15, 60, 25])
  })

  it('rejects a malformed request budget naming the field', () => {
    expect(() => assertReservation(null)).to.throw(TypeError, 'subagent request budget must be an object')
    expect(() => assertReservation({ tokens: -1 })).to.throw(TypeError, 'subagent request budget.tokens must be a non-negative safe integer')
    expect(() => assertReservation({ children: 0.5 })).to.throw(TypeError, 'subagent request budget.children must be a non-negative safe integer')
    expect(() => assertReservation({ modelRequests: Number.NaN })).to.throw(TypeError, 'subagent request budget.modelRequests must be a non-negative safe integer')
    expect(() => assertReservation({ tokens: 2 ** 60 })).to.throw(TypeError, 'subagent request budget.tokens must be a non-negative safe integer')
    expect(() => assertReservation({ dollars: 1 })).to.throw(TypeError, 'subagent request budget has unknown field "dollars"')
  })
})
