import { expect } from 'chai'
import type { ModelAdapter, StreamPart, Usage } from '../../lib/types.ts'
import StructuredOutput from '../../plugins/structured-output/index.ts'
import { eventsOf } from '../support/harness.ts'
import { createBudgetFixture } from './fixture.ts'

/** A model route whose one stream waits for `open()`, then answers with `usage`. */
function gate(usage: Usage): { adapter: ModelAdapter; entered: Promise<void>; open(): void } {
  let open!: () => void
  const opened = new Promise<void>((resolve) => (open = resolve))
  let enter!: () => void
  const entered = new Promise<void>((resolve) => (enter = resolve))
  return {
    entered,
    open: () => open(),
    adapter: {
      async *stream(): AsyncGenerator<StreamPart> {
        enter()
        await opened
        yield { type: 'text-delta', text: 'late answer' }
        yield { type: 'finish', reason: 'stop', usage }
      },
    },
  }
}

describe('TreeBudget: tokens and model requests (SPEC §9)', () => {
  it('ends a child turn with the budget turn end before a model request once tokens are spent', async () => {
    const fixture = await createBudgetFixture({ budget: { maxTokens: 10 } })
    fixture.host.root.tools.register({ name: 'look', description: 'l', parameters: { type: 'object' }, execute: () => 'seen' })
    fixture.host.scripted.push({ toolCalls: [{ id: 'a', name: 'look', arguments: '{}' }], usage: { inputTokens: 9, outputTokens: 3 } })
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
    const result = await run.result
    expect(result).to.deep.equal({
      output: [{ type: 'tool-call', id: 'a', name: 'look', arguments: '{}' }],
      stopReason: 'budget',
      diagnostic: 'the delegation tree exhausted its tokens budget (12 of 10)',
      diagnosticText: { key: 'budget', params: { limit: 'tokens', used: 12, max: 10 } },
      usage: { inputTokens: 9, outputTokens: 3 },
      treeUsage: { inputTokens: 9, outputTokens: 3 },
    })
    expect(eventsOf(run.agent, 'turn/end')).to.deep.equal([{ turn: 1, reason: { kind: 'budget', limit: 'tokens', used: 12, max: 10 } }])
    expect(fixture.host.scripted.requests).to.have.length(1)
    await run.dispose()
  })

  it('keeps the budget stop of a structured child that never committed, rather than error (SPEC §3, §9)', async () => {
    const fixture = await createBudgetFixture({ budget: { maxModelRequests: 2 } })
    await fixture.host.load(StructuredOutput, {})
    fixture.host.root.tools.register({ name: 'look', description: 'l', parameters: { type: 'object' }, execute: () => 'seen' })
    fixture.host.scripted.push({ toolCalls: [{ id: 'a', name: 'look', arguments: '{}' }] }, { toolCalls: [{ id: 'b', name: 'look', arguments: '{}' }] })
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request({ outputSchema: { type: 'object', properties: { x: { type: 'string' } } } }))
    const result = await run.result
    expect([result.stopReason, result.diagnostic, 'structured' in result]).to.deep.equal([
      'budget',
      'the delegation tree exhausted its modelRequests budget (2 of 2)',
      false,
    ])
    await run.dispose()
  })

  it('stops the root itself before its first model request when the tree is spent', async () => {
    const fixture = await createBudgetFixture({ budget: { maxModelRequests: 0 } })
    fixture.root.followup('hello')
    await fixture.root.whenIdle()
    expect(eventsOf(fixture.root, 'turn/end')).to.deep.equal([
      { turn: 1, reason: { kind: 'budget', limit: 'modelRequests', used: 0, max: 0 } },
    ])
    expect(eventsOf(fixture.root, 'step/start')).to.deep.equal([])
  })

  it('counts a model request that fails as sent', async () => {
    const fixture = await createBudgetFixture({ budget: { maxModelRequests: 5 } })
    fixture.host.scripted.push(new Error('upstream 503'))
    fixture.root.followup('hello')
    await fixture.root.whenIdle()
    expect(fixture.budget.usage(fixture.root)).to.deep.equal({ inputTokens: 0, outputTokens: 0, modelRequests: 1, children: 0 })
    expect(fixture.budget.remaining(fixture.root).modelRequests).to.equal(4)
  })

  it('lets a request in flight finish and counts its usage after the limit was lowered below what is spent', async () => {
    const fixture = await createBudgetFixture({ budget: { maxTokens: 1000 } })
    const slow = gate({ inputTokens: 40, outputTokens: 10 })
    fixture.host.root.models.register('slow', slow.adapter)
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request({ agentOptions: { provider: 'slow', model: 'm' } }))
    await slow.entered
    await fixture.fiber.update({ maxTokens: 20 })
    slow.open()
    const result = await run.result
    expect([result.stopReason, result.treeUsage]).to.deep.equal(['completed', { inputTokens: 40, outputTokens: 10 }])
    expect(fixture.budget.remaining(fixture.root).tokens).to.equal(0)
    await run.dispose()
  })

  it('keeps what was spent across a config update and stops new work at the lowered limit', async () => {
    const fixture = await createBudgetFixture({ budget: { maxModelRequests: 10 } })
    fixture.host.scripted.push({ text: 'one' }, { text: 'two' })
    fixture.root.followup('first')
    fixture.root.followup('second')
    await fixture.root.whenIdle()
    await fixture.fiber.update({ maxModelRequests: 2 })
    fixture.root.followup('third')
    await fixture.root.whenIdle()
    expect(eventsOf(fixture.root, 'turn/end').at(-1)).to.deep.equal({
      turn: 3,
      reason: { kind: 'budget', limit: 'modelRequests', used: 2, max: 2 },
    })
  })
})
