import { expect } from 'chai'
import TreeBudget from '../../plugins/tree-budget/index.ts'
import type { Agent } from '../../lib/types.ts'
import { crashCopy, durableHost, tick } from './fixture.ts'

async function until(agent: Agent, count: number, type: string): Promise<void> {
  while (agent.session.events.filter((event) => event.type === type).length < count) await tick()
}

describe('resumeTree with TreeBudget: what the tree spent, recounted from the sessions (SPEC §14)', () => {
  it('counts an unsettled child and the request it had in flight at the crash, once', async () => {
    const budget: TreeBudget.Config = { maxTokens: 100, maxModelRequests: 10, maxChildren: 5 }
    const first = await durableHost(undefined, [[TreeBudget, budget]])
    first.root.tools.register({ name: 'noop', description: 'nothing', parameters: { type: 'object' }, execute: async () => ({ isError: false, content: [] }) })
    const root = await first.agent()
    first.scripted.push(
      { text: 'root answer', usage: { inputTokens: 8, outputTokens: 2 } },
      { toolCalls: [{ id: 'c1', name: 'noop', arguments: '{}' }], usage: { inputTokens: 25, outputTokens: 5 } },
      'hang',
    )
    root.followup('hi')
    await root.whenIdle()
    const run = await first.root.inprocessRun.spawn({ parent: root, prompt: 'work', signal: new AbortController().signal })
    // its second request is in flight
    await until(run.agent, 2, 'step/start')
    await until(run.agent, 1, 'assistant/delta')
    expect(first.root.treeBudget.usage(root)).to.deep.equal({ inputTokens: 33, outputTokens: 7, modelRequests: 3, children: 1 })
    const dir = await crashCopy(first)
    await run.dispose()

    const second = await durableHost(dir, [[TreeBudget, budget]])
    const tree = await second.root.inprocessRun.resumeTree(root.id)
    const [child] = tree.agents
    expect(second.root.treeBudget.usage(tree.root)).to.deep.equal({ inputTokens: 33, outputTokens: 7, modelRequests: 3, children: 1 })
    expect(second.root.treeBudget.usage(child!)).to.deep.equal({ inputTokens: 25, outputTokens: 5, modelRequests: 2, children: 0 })
    expect(second.root.treeBudget.remaining(tree.root)).to.deep.equal({ tokens: 60, modelRequests: 7, children: 4 })
    // a new message of the child counts once more, on the child and the root
    second.scripted.push({ text: 'resumed', usage: { inputTokens: 4, outputTokens: 1 } })
    child!.followup('go on')
    await child!.whenIdle()
    expect(second.root.treeBudget.usage(tree.root)).to.deep.equal({ inputTokens: 37, outputTokens: 8, modelRequests: 4, children: 1 })
    await tree.dispose()
  })
})
