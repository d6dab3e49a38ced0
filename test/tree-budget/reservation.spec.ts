import { expect } from 'chai'
import { SubagentBudgetError } from '../../lib/errors.ts'
import { createDriverHost } from '../support/driver.ts'
import { rejectionOf } from '../support/scene.ts'
import { createBudgetFixture } from './fixture.ts'
import { createLatchModel } from './latch-model.ts'

describe('TreeBudget: reservations (SPEC §9)', () => {
  it('rejects a malformed request budget naming the field, before anything is created', async () => {
    const fixture = await createBudgetFixture()
    const error = await fixture.host.root.inprocessRun.spawn(fixture.request({ budget: { tokens: -5 } })).then(
      () => undefined,
      (reason: Error) => reason,
    )
    expect(error).to.be.instanceOf(TypeError)
    expect(error?.message).to.equal('subagent request budget.tokens must be a non-negative safe integer')
    expect(fixture.host.root.agents.list()).to.have.length(1)
  })

  it('checks the shape of a request budget at subagent/prepare, before the depth cap', async () => {
    const fixture = await createBudgetFixture()
    const error = await rejectionOf(fixture.host.root.inprocessRun.spawn(fixture.request({ maxDepth: 0, budget: { children: 'all' as never } })))
    expect(error).to.be.instanceOf(TypeError)
    expect(error.message).to.equal('subagent request budget.children must be a non-negative safe integer')
  })

  for (const [what, budget, message] of [
    ['that is not an object', 5, 'subagent request budget must be an object'],
    ['with an unknown field', { dollars: 1 }, 'subagent request budget has unknown field "dollars"'],
  ] as const) {
    it(`rejects a request budget ${what}, before anything is created`, async () => {
      const fixture = await createBudgetFixture()
      const error = await rejectionOf(fixture.host.root.inprocessRun.spawn(fixture.request({ budget: budget as never })))
      expect(error).to.be.instanceOf(TypeError)
      expect(error.message).to.equal(message)
      expect(fixture.host.root.agents.list()).to.have.length(1)
    })
  }

  it('rejects a request budget as unsupported when TreeBudget is not loaded', async () => {
    const host = await createDriverHost()
    const error = await host.root.inprocessRun.spawn(host.request({ budget: { tokens: 5 } })).then(
      () => undefined,
      (reason: Error) => reason.message,
    )
    expect(error).to.equal('subagent runtime does not support the "budget" capability')
  })

  it('rejects a reservation larger than what the tree has left', async () => {
    const fixture = await createBudgetFixture({ budget: { maxTokens: 100 } })
    const latch = createLatchModel()
    fixture.host.root.models.register('latch', latch.adapter)
    const holder = await fixture.host.root.inprocessRun.spawn(
      fixture.request({ prompt: 'a', budget: { tokens: 70 }, agentOptions: { provider: 'latch', model: 'm' } }),
    )
    const error = await fixture.host.root.inprocessRun.spawn(fixture.request({ budget: { tokens: 40 } })).then(
      () => undefined,
      (reason: unknown) => reason,
    )
    expect(error).to.be.instanceOf(SubagentBudgetError)
    expect((error as Error).message).to.equal('subagent budget exhausted: tokens 70 of 100')
    latch.release('a')
    await holder.dispose()
  })

  it('holds the reservation back from the rest of the tree while the run is live and returns the unspent part at settle', async () => {
    const fixture = await createBudgetFixture({ budget: { maxTokens: 100 } })
    const latch = createLatchModel()
    fixture.host.root.models.register('latch', latch.adapter)
    const run = await fixture.host.root.inprocessRun.spawn(
      fixture.request({ prompt: 'a', budget: { tokens: 30 }, agentOptions: { provider: 'latch', model: 'm' } }),
    )
    await latch.entered('a')
    expect([fixture.budget.remaining(fixture.root).tokens, fixture.budget.remaining(run.agent).tokens]).to.deep.equal([70, 30])
    latch.release('a')
    await run.result
    expect(fixture.budget.remaining(fixture.root).tokens).to.equal(96)
    await run.dispose()
  })

  it("stops a subtree at its reservation with the reservation's figures", async () => {
    const fixture = await createBudgetFixture({ budget: { maxTokens: 1000 } })
    fixture.host.root.tools.register({ name: 'look', description: 'l', parameters: { type: 'object' }, execute: () => 'seen' })
    fixture.host.scripted.push({ toolCalls: [{ id: 'a', name: 'look', arguments: '{}' }], usage: { inputTokens: 20, outputTokens: 5 } })
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request({ budget: { tokens: 25 } }))
    const result = await run.result
    expect([result.stopReason, result.diagnostic]).to.deep.equal(['budget', 'the delegation tree exhausted its tokens budget (25 of 25)'])
    expect(fixture.budget.remaining(fixture.root).tokens).to.equal(975)
    await run.dispose()
  })

  it('counts a grandchild against its parent reservation of children, never the parent itself', async () => {
    const fixture = await createBudgetFixture({ budget: { maxChildren: 10 } })
    const { inprocessRun } = fixture.host.root
    fixture.host.scripted.push({ text: 'child' }, { text: 'grandchild' })
    const child = await inprocessRun.spawn(fixture.request({ budget: { children: 1 } }))
    await child.result
    const grandchild = await inprocessRun.spawn(fixture.request({ parent: child.agent }))
    await grandchild.result
    const error = await inprocessRun.spawn(fixture.request({ parent: child.agent })).then(
      () => undefined,
      (reason: Error) => reason.message,
    )
    expect(error).to.equal('subagent budget exhausted: children 1 of 1')
    expect(fixture.budget.usage(fixture.root).children).to.equal(2)
    await child.dispose()
  })
})
