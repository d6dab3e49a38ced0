import { expect } from 'chai'
import { SubagentBudgetError } from '../../lib/errors.ts'
import TreeBudget from '../../plugins/tree-budget/index.ts'
import { rejectionOf } from '../support/scene.ts'
import { createBudgetFixture } from './fixture.ts'
import { createLatchModel } from './latch-model.ts'

describe('TreeBudget across an unload and a reload (SPEC §0 hot reload, §9)', () => {
  it('keeps a run live through the unload, and the reloaded plugin budgets the next start', async () => {
    const fixture = await createBudgetFixture({ budget: { maxChildren: 1 } })
    const latch = createLatchModel()
    fixture.host.root.models.register('latch', latch.adapter)
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request({ prompt: 'a', agentOptions: { provider: 'latch', model: 'm' } }))
    await latch.entered('a')
    await fixture.fiber.dispose()
    const reloaded = fixture.host.load(TreeBudget, { maxChildren: 0 })
    await reloaded
    // the scene compares with the host as it was before the first TreeBudget loaded
    fixture.host.baseline = fixture.host.snapshots[1]!
    expect(fixture.host.root.agents.get(run.id)?.status).to.equal('running')
    const error = await rejectionOf(fixture.host.root.inprocessRun.spawn(fixture.request()))
    expect(error).to.be.instanceOf(SubagentBudgetError)
    // `used` is left out: what the reloaded plugin knows of the live tree is its Known limit
    const { limit, max } = error as SubagentBudgetError
    expect([limit, max]).to.deep.equal(['children', 0])
    latch.release('a')
    expect((await run.result).stopReason).to.equal('completed')
    await run.dispose()
  })
})
