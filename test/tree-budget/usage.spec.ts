import { expect } from 'chai'
import type { Agent } from '../../lib/types.ts'
import type { InProcessRun } from '../../plugins/inprocess-run/index.ts'
import type { TestHost } from '../support/harness.ts'
import { createBudgetFixture } from './fixture.ts'
import { createLatchModel } from './latch-model.ts'

/** A global tool `helper` that starts one grandchild under the calling agent and returns its output. */
function registerHelper(host: TestHost, inprocessRun: InProcessRun, cancel = false): void {
  host.root.tools.register({
    name: 'helper',
    description: 'starts a grandchild',
    parameters: { type: 'object' },
    async execute(_args, exec) {
      const controller = new AbortController()
      const run = await inprocessRun.spawn({ parent: exec.agent!, prompt: 'help', signal: controller.signal })
      if (cancel) controller.abort()
      const result = await run.result
      await run.dispose()
      return result.stopReason
    },
  })
}

describe('TreeBudget: usage roll-up (SPEC §9)', () => {
  it("adds every descendant's usage to treeUsage and keeps usage the child's own", async () => {
    const fixture = await createBudgetFixture()
    const { inprocessRun } = fixture.host.root
    registerHelper(fixture.host, inprocessRun)
    fixture.host.scripted.push(
      { toolCalls: [{ id: 'h', name: 'helper', arguments: '{}' }], usage: { inputTokens: 10, outputTokens: 1 } },
      { text: 'grandchild', usage: { inputTokens: 5, outputTokens: 2 } },
      { text: 'child', usage: { inputTokens: 20, outputTokens: 3 } },
    )
    const run = await inprocessRun.spawn(fixture.request())
    const result = await run.result
    expect([result.usage, result.treeUsage]).to.deep.equal([
      { inputTokens: 30, outputTokens: 4 },
      { inputTokens: 35, outputTokens: 6 },
    ])
    await run.dispose()
  })

  it("counts a cancelled grandchild's messages once in the tree", async () => {
    const fixture = await createBudgetFixture()
    const { inprocessRun } = fixture.host.root
    registerHelper(fixture.host, inprocessRun, true)
    fixture.host.scripted.push(
      { toolCalls: [{ id: 'h', name: 'helper', arguments: '{}' }], usage: { inputTokens: 10, outputTokens: 1 } },
      'hang',
      { text: 'child', usage: { inputTokens: 20, outputTokens: 3 } },
    )
    const run = await inprocessRun.spawn(fixture.request())
    const result = await run.result
    expect(result.treeUsage).to.deep.equal({ inputTokens: 30, outputTokens: 4 })
    expect(fixture.budget.usage(fixture.root)).to.deep.equal({ inputTokens: 30, outputTokens: 4, modelRequests: 3, children: 2 })
    await run.dispose()
  })

  it("answers usage() of a child with its subtree's figures, leaving out its parent's own (SPEC §9)", async () => {
    const fixture = await createBudgetFixture()
    const { inprocessRun } = fixture.host.root
    registerHelper(fixture.host, inprocessRun)
    fixture.host.scripted.push({ text: 'root answer', usage: { inputTokens: 100, outputTokens: 10 } })
    fixture.root.followup('hello')
    await fixture.root.whenIdle()
    fixture.host.scripted.push(
      { toolCalls: [{ id: 'h', name: 'helper', arguments: '{}' }], usage: { inputTokens: 10, outputTokens: 1 } },
      { text: 'grandchild', usage: { inputTokens: 5, outputTokens: 2 } },
      { text: 'child', usage: { inputTokens: 20, outputTokens: 3 } },
    )
    const run = await inprocessRun.spawn(fixture.request())
    await run.result
    expect([fixture.budget.usage(run.agent), fixture.budget.usage(fixture.root)]).to.deep.equal([
      { inputTokens: 35, outputTokens: 6, modelRequests: 3, children: 1 },
      { inputTokens: 135, outputTokens: 16, modelRequests: 4, children: 2 },
    ])
    await run.dispose()
  })

  it('reports treeUsage on a failed run', async () => {
    const fixture = await createBudgetFixture()
    fixture.host.root.tools.register({ name: 'look', description: 'l', parameters: { type: 'object' }, execute: () => 'seen' })
    fixture.host.scripted.push(
      { toolCalls: [{ id: 'a', name: 'look', arguments: '{}' }], usage: { inputTokens: 7, outputTokens: 1 } },
      new Error('upstream 503'),
    )
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
    const result = await run.result
    expect([result.stopReason, result.treeUsage]).to.deep.equal(['error', { inputTokens: 7, outputTokens: 1 }])
    await run.dispose()
  })

  for (const [what, value] of [
    ['undefined', undefined],
    ['an object without a session', { id: 'x' }],
    ['a session without a header', { id: 'x', session: { events: [] } }],
  ] as const) {
    it(`rejects usage() and remaining() of ${what} with a TypeError naming the argument`, async () => {
      const { budget } = await createBudgetFixture()
      const notAnAgent = value as unknown as Agent
      expect(() => budget.usage(notAnAgent)).to.throw(TypeError, /^treeBudget\.usage agent must be an agent$/)
      expect(() => budget.remaining(notAnAgent)).to.throw(TypeError, /^treeBudget\.remaining agent must be an agent$/)
    })
  }

  it('shows absent limits as Infinity and counts the root itself', async () => {
    const fixture = await createBudgetFixture({ budget: { maxTokens: 50 } })
    fixture.host.scripted.push({ text: 'hi', usage: { inputTokens: 4, outputTokens: 2 } })
    fixture.root.followup('hello')
    await fixture.root.whenIdle()
    expect(fixture.budget.usage(fixture.root)).to.deep.equal({ inputTokens: 4, outputTokens: 2, modelRequests: 1, children: 0 })
    expect(fixture.budget.remaining(fixture.root)).to.deep.equal({ children: Infinity, tokens: 44, modelRequests: Infinity })
  })

  it('counts the request of a child disposed mid-turn, and no tokens for its interrupted message', async () => {
    const fixture = await createBudgetFixture()
    fixture.host.scripted.push('hang')
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
    const streamed = new Promise<void>((resolve) => {
      const off = fixture.host.root.on('session/event', (session, event) => {
        if (session === run.agent.session && event.type === 'assistant/delta') {
          off()
          resolve()
        }
      })
    })
    await streamed
    await run.dispose()
    expect([(await run.result).treeUsage, fixture.budget.usage(fixture.root)]).to.deep.equal([
      { inputTokens: 0, outputTokens: 0 },
      { inputTokens: 0, outputTokens: 0, modelRequests: 1, children: 1 },
    ])
  })
})

describe('TreeBudget: usage roll-up across an unload (SPEC §9, §0 hot reload)', () => {
  it('reports no treeUsage, rather than a short one, for a run that settles after its TreeBudget was unloaded', async () => {
    const fixture = await createBudgetFixture()
    const latch = createLatchModel()
    fixture.host.root.models.register('latch', latch.adapter)
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request({ prompt: 'a', agentOptions: { provider: 'latch', model: 'm' } }))
    await latch.entered('a')
    await fixture.fiber.dispose()
    // the scene compares with the host as it was before TreeBudget loaded
    fixture.host.baseline = fixture.host.snapshots[1]!
    latch.release('a')
    const result = await run.result
    expect(result.usage).to.deep.equal({ inputTokens: 3, outputTokens: 1 })
    expect(result).not.to.have.property('treeUsage')
    await run.dispose()
  })
})
