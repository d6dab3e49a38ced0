import { expect } from 'chai'
import { SubagentBudgetError } from '../../lib/errors.ts'
import { createBudgetFixture } from './fixture.ts'

async function rejection(promise: Promise<unknown>): Promise<SubagentBudgetError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  )
  expect(error).to.be.instanceOf(SubagentBudgetError)
  return error as SubagentBudgetError
}

describe('TreeBudget: children (SPEC §9)', () => {
  it('rejects a start beyond maxChildren with SubagentBudgetError before anything is created', async () => {
    const fixture = await createBudgetFixture({ budget: { maxChildren: 1 } })
    fixture.host.scripted.push({ text: 'one' })
    const first = await fixture.host.root.inprocessRun.spawn(fixture.request())
    await first.result
    await first.dispose()
    const agentsBefore = fixture.host.root.agents.list().length
    const error = await rejection(fixture.host.root.inprocessRun.spawn(fixture.request()))
    expect([error.name, error.limit, error.used, error.max, error.message]).to.deep.equal([
      'SubagentBudgetError',
      'children',
      1,
      1,
      'subagent budget exhausted: children 1 of 1',
    ])
    expect(fixture.host.root.agents.list().length).to.equal(agentsBefore)
  })

  it('counts a grandchild against the root tree', async () => {
    const fixture = await createBudgetFixture({ budget: { maxChildren: 2 } })
    const { inprocessRun } = fixture.host.root
    fixture.host.scripted.push({ text: 'child' }, { text: 'grandchild' })
    const child = await inprocessRun.spawn(fixture.request())
    await child.result
    const grandchild = await inprocessRun.spawn(fixture.request({ parent: child.agent }))
    await grandchild.result
    const error = await rejection(inprocessRun.spawn(fixture.request()))
    expect(error.message).to.equal('subagent budget exhausted: children 2 of 2')
    await child.dispose()
  })

  it('rejects a start in a tree whose tokens are spent', async () => {
    const fixture = await createBudgetFixture({ budget: { maxTokens: 10 } })
    fixture.host.scripted.push({ text: 'expensive', usage: { inputTokens: 8, outputTokens: 4 } })
    fixture.root.followup('think')
    await fixture.root.whenIdle()
    const error = await rejection(fixture.host.root.inprocessRun.spawn(fixture.request()))
    expect([error.limit, error.message]).to.deep.equal(['tokens', 'subagent budget exhausted: tokens 12 of 10'])
  })

  it('rejects a start in a tree whose model requests are spent', async () => {
    const fixture = await createBudgetFixture({ budget: { maxModelRequests: 1 } })
    fixture.host.scripted.push({ text: 'one request' })
    fixture.root.followup('think')
    await fixture.root.whenIdle()
    const error = await rejection(fixture.host.root.inprocessRun.spawn(fixture.request()))
    expect(error.message).to.equal('subagent budget exhausted: modelRequests 1 of 1')
  })

  it('gives the child back to the tree when creation fails after admission', async () => {
    const fixture = await createBudgetFixture({ budget: { maxChildren: 1 } })
    const failed = await fixture.host.root.inprocessRun
      .spawn(fixture.request({ toolFilter: { allow: ['no_such_tool'] } }))
      .then(
        () => undefined,
        (error: Error) => error.message,
      )
    expect(failed).to.equal('unknown global tool "no_such_tool"')
    expect(fixture.budget.usage(fixture.root).children).to.equal(0)
    expect(fixture.budget.remaining(fixture.root).children).to.equal(1)
  })
})
