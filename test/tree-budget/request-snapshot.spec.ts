import { expect } from 'chai'
import { createBudgetFixture } from './fixture.ts'
import { createLatchModel } from './latch-model.ts'

/** A reservation whose `field` reads `first` the first two times and `later` after: a check sees one, the booking another. */
function shiftingBudget(field: 'tokens' | 'children', first: number, later: number): { budget: object; reads: () => number } {
  let reads = 0
  const budget = {}
  Object.defineProperty(budget, field, {
    enumerable: true,
    get: () => (++reads <= 2 ? first : later),
  })
  return { budget, reads: () => reads }
}

describe('TreeBudget: a request budget is read once (the driver snapshot)', () => {
  it('reserves the tokens a start asked for when its budget getter answers differently later, reading it once', async () => {
    const fixture = await createBudgetFixture({ budget: { maxTokens: 100 } })
    const latch = createLatchModel()
    fixture.host.root.models.register('latch', latch.adapter)
    const { budget, reads } = shiftingBudget('tokens', 10, -1_000_000)
    const run = await fixture.host.root.inprocessRun.spawn(
      fixture.request({ prompt: 'a', budget: budget as never, agentOptions: { provider: 'latch', model: 'm' } }),
    )
    await latch.entered('a')
    expect([fixture.budget.remaining(fixture.root).tokens, fixture.budget.remaining(run.agent).tokens]).to.deep.equal([90, 10])
    expect(reads()).to.equal(1)
    latch.release('a')
    await run.result
    await run.dispose()
  })

  it('keeps maxChildren when a budget getter answers a negative children reservation after the checks', async () => {
    const fixture = await createBudgetFixture({ budget: { maxChildren: 3 } })
    const latch = createLatchModel()
    fixture.host.root.models.register('latch', latch.adapter)
    const { budget, reads } = shiftingBudget('children', 1, -10)
    const run = await fixture.host.root.inprocessRun.spawn(
      fixture.request({ prompt: 'a', budget: budget as never, agentOptions: { provider: 'latch', model: 'm' } }),
    )
    await latch.entered('a')
    // one child started, one reserved for its subtree: one left for the rest of the tree
    expect(fixture.budget.remaining(fixture.root).children).to.equal(1)
    expect(reads()).to.equal(1)
    latch.release('a')
    await run.result
    await run.dispose()
  })
})
