import { expect } from 'chai'
import sinon from 'sinon'
import { rawService } from '../../plugins/host/cordis-bridge.ts'
import { createBudgetFixture } from './fixture.ts'

/** The listener table of the host's events, as the dispatch reads it. */
function hookNames(root: object): string[] {
  const hooks = (rawService((root as { events: object }).events) as { _hooks: Record<string, unknown[]> })._hooks
  return Object.keys(hooks).filter((name) => hooks[name].length > 0)
}

describe('TreeBudget bookkeeping (cost per child)', () => {
  it('opens no setup window for a plain child', async () => {
    const fixture = await createBudgetFixture({ budget: { maxChildren: 5 } })
    const create = sinon.spy(rawService(fixture.host.root.agents), 'create')
    fixture.host.scripted.push({ text: 'ok' })
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
    create.restore()
    expect(create.callCount).to.equal(1)
    expect(create.firstCall.args[0]).to.not.have.property('setup')
    expect((await run.result).treeUsage).to.deep.equal({ inputTokens: 0, outputTokens: 0 })
    await run.dispose()
    await fixture.close()
  })

  it('listens to no per-step, per-event or settle hook: the loop calls its meter, the driver its ticket', async () => {
    const fixture = await createBudgetFixture({ budget: { maxTokens: 100 } })
    const names = hookNames(fixture.host.root)
    expect(
      names.filter((name) => ['agent/pre-step', 'agent/model-request', 'session/event', 'subagent/setup', 'subagent/settle', 'subagent/end'].includes(name)),
    ).to.deep.equal([
      // the fixture's invariant observer
      'session/event',
    ])
    await fixture.close()
  })

  it('forgets a child when it is disposed and still answers for it from its session', async () => {
    const fixture = await createBudgetFixture({ budget: { maxTokens: 100 } })
    fixture.host.scripted.push({ text: 'ok', usage: { inputTokens: 7, outputTokens: 3 } })
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
    await run.result
    expect(fixture.budget.usage(run.agent)).to.deep.equal({ inputTokens: 7, outputTokens: 3, modelRequests: 1, children: 0 })
    await run.dispose()
    expect(fixture.budget.usage(run.agent)).to.deep.equal({ inputTokens: 7, outputTokens: 3, modelRequests: 1, children: 0 })
    expect(fixture.budget.usage(fixture.root)).to.deep.equal({ inputTokens: 7, outputTokens: 3, modelRequests: 1, children: 1 })
    await fixture.close()
  })
})
