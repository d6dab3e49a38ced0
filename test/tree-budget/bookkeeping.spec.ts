import { expect } from 'chai'
import sinon from 'sinon'
import { rawService } from '../../cordis-glue/bridge.ts'
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

  it('counts every request of children live at the same time, each on its own node', async () => {
    const fixture = await createBudgetFixture({ budget: { maxConcurrent: 2, maxModelRequests: 100 } })
    const { inprocessRun } = fixture.host.root
    for (const n of [1, 2, 3]) fixture.host.scripted.push({ text: `ok ${n}`, usage: { inputTokens: n, outputTokens: 1 } })
    const runs = [await inprocessRun.spawn(fixture.request()), await inprocessRun.spawn(fixture.request())]
    // waits for a slot: one of the two live runs must settle first
    runs.push(await inprocessRun.spawn(fixture.request()))
    const results = await Promise.all(runs.map((run) => run.result))
    expect(results.map((result) => result.treeUsage)).to.deep.equal([
      { inputTokens: 1, outputTokens: 1 },
      { inputTokens: 2, outputTokens: 1 },
      { inputTokens: 3, outputTokens: 1 },
    ])
    expect(runs.map((run) => fixture.budget.usage(run.agent).modelRequests)).to.deep.equal([1, 1, 1])
    expect(fixture.budget.usage(fixture.root)).to.deep.equal({ inputTokens: 6, outputTokens: 3, modelRequests: 3, children: 3 })
    await Promise.all(runs.map((run) => run.dispose()))
    expect(fixture.budget.remaining(fixture.root)).to.deep.equal({ children: Infinity, tokens: Infinity, modelRequests: 97 })
  })
})
