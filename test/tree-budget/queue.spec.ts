import { getEventListeners } from 'node:events'
import { expect } from 'chai'
import type { SubagentRun } from '../../lib/types.ts'
import { createBudgetFixture } from './fixture.ts'
import { createLatchModel } from './latch-model.ts'

const latchOptions = { provider: 'latch', model: 'm' }

describe('TreeBudget: the concurrency queue (SPEC §9)', () => {
  it('makes a start beyond maxConcurrent wait until an earlier run of the same parent settles', async () => {
    const fixture = await createBudgetFixture({ budget: { maxConcurrent: 1 } })
    const latch = createLatchModel()
    fixture.host.root.models.register('latch', latch.adapter)
    const { inprocessRun } = fixture.host.root
    const first = await inprocessRun.spawn(fixture.request({ prompt: 'a', agentOptions: latchOptions }))
    let secondStarted = false
    const second = inprocessRun.spawn(fixture.request({ prompt: 'b', agentOptions: latchOptions })).then((run) => {
      secondStarted = true
      return run
    })
    await latch.entered('a')
    expect([secondStarted, fixture.host.root.agents.list().length]).to.deep.equal([false, 2])
    latch.release('a')
    await first.result
    const run = await second
    latch.release('b')
    expect((await run.result).output).to.deep.equal([{ type: 'text', text: 'done b' }])
    await Promise.all([first.dispose(), run.dispose()])
  })

  it('rejects a waiting start whose signal aborts, and creates nothing', async () => {
    const fixture = await createBudgetFixture({ budget: { maxConcurrent: 1 } })
    const latch = createLatchModel()
    fixture.host.root.models.register('latch', latch.adapter)
    const first = await fixture.host.root.inprocessRun.spawn(fixture.request({ prompt: 'a', agentOptions: latchOptions }))
    const controller = new AbortController()
    const waiting = fixture.host.root.inprocessRun.spawn(fixture.request({ prompt: 'b', signal: controller.signal }))
    await latch.entered('a')
    controller.abort()
    const error = await waiting.then(
      () => undefined,
      (reason: Error) => reason,
    )
    expect(error?.message).to.equal('subagent request was aborted before child publication')
    expect(fixture.host.root.agents.list().map((agent) => agent.id)).to.deep.equal([fixture.root.id, first.id])
    expect(fixture.budget.usage(fixture.root).children).to.equal(1)
    latch.release('a')
    await first.dispose()
  })

  it('adds one abort listener to a signal however many starts wait in line on it', async () => {
    const fixture = await createBudgetFixture({ budget: { maxConcurrent: 1 } })
    const latch = createLatchModel()
    fixture.host.root.models.register('latch', latch.adapter)
    const first = await fixture.host.root.inprocessRun.spawn(fixture.request({ prompt: 'a', agentOptions: latchOptions }))
    const controller = new AbortController()
    const waiting = Array.from({ length: 12 }, (_, i) => fixture.host.root.inprocessRun.spawn(fixture.request({ prompt: `w${i}`, signal: controller.signal })))
    await latch.entered('a')
    const listening = getEventListeners(controller.signal, 'abort').length
    controller.abort()
    const outcomes = await Promise.allSettled(waiting)
    expect([listening, outcomes.filter((outcome) => outcome.status === 'rejected').length]).to.deep.equal([1, 12])
    latch.release('a')
    await first.dispose()
  })

  it('rejects at once, without waiting for a slot, a start whose signal a subagent/prepare listener aborted', async () => {
    const fixture = await createBudgetFixture({ budget: { maxConcurrent: 1 } })
    const latch = createLatchModel()
    fixture.host.root.models.register('latch', latch.adapter)
    const first = await fixture.host.root.inprocessRun.spawn(fixture.request({ prompt: 'a', agentOptions: latchOptions }))
    await latch.entered('a')
    const controller = new AbortController()
    const off = fixture.host.root.on('subagent/prepare', (plan) => {
      if (plan.request.signal === controller.signal) controller.abort()
    })
    const error = await fixture.host.root.inprocessRun.spawn(fixture.request({ prompt: 'b', signal: controller.signal })).then(
      () => undefined,
      (reason: Error) => reason,
    )
    off()
    expect(error?.message).to.equal('subagent request was aborted before child publication')
    expect(fixture.host.root.agents.list().map((agent) => agent.id)).to.deep.equal([fixture.root.id, first.id])
    latch.release('a')
    await first.dispose()
  })

  it('waits on the signal the entry checked, not on a later answer of a changing signal getter', async () => {
    const fixture = await createBudgetFixture({ budget: { maxConcurrent: 1 } })
    const latch = createLatchModel()
    fixture.host.root.models.register('latch', latch.adapter)
    const first = await fixture.host.root.inprocessRun.spawn(fixture.request({ prompt: 'a', agentOptions: latchOptions }))
    await latch.entered('a')
    const checked = new AbortController()
    const answers = [checked.signal]
    const request = fixture.request({ prompt: 'b' })
    // the first read gets the signal the caller will abort; any later one a signal nobody aborts
    Object.defineProperty(request, 'signal', { get: () => answers.shift() ?? new AbortController().signal })
    const waiting = fixture.host.root.inprocessRun.spawn(request)
    checked.abort()
    const error = await waiting.then(
      () => undefined,
      (reason: Error) => reason,
    )
    expect(error?.message).to.equal('subagent request was aborted before child publication')
    latch.release('a')
    await first.dispose()
  })

  it('rejects the waiting starts of a parent that is disposed, leaving nothing', async () => {
    const fixture = await createBudgetFixture({ budget: { maxConcurrent: 1 } })
    const latch = createLatchModel()
    fixture.host.root.models.register('latch', latch.adapter)
    const { inprocessRun } = fixture.host.root
    fixture.host.scripted.push({ text: 'mid done' })
    const mid = await inprocessRun.spawn(fixture.request({ prompt: 'mid' }))
    await mid.result
    const running = await inprocessRun.spawn(fixture.request({ parent: mid.agent, prompt: 'a', agentOptions: latchOptions }))
    const queued = [1, 2, 3].map((n) => inprocessRun.spawn(fixture.request({ parent: mid.agent, prompt: `q${n}` })))
    const outcomes = Promise.allSettled(queued)
    await latch.entered('a')
    await mid.dispose()
    const settled = await outcomes
    expect(settled.map((outcome) => outcome.status)).to.deep.equal(['rejected', 'rejected', 'rejected'])
    // a start let in by a slot freed during the disposal meets the host's refusal instead: at its
    // owner check, or at publication when its creation began before the owner was gone
    const refusal = new RegExp(
      `^(agent "${mid.id}" is disposed|owner agent "${mid.id}" is not live|owner agent "${mid.id}" was disposed before agent "[0-9a-f-]+" was published)$`,
    )
    for (const outcome of settled) expect(((outcome as PromiseRejectedResult).reason as Error).message).to.match(refusal)
    expect(fixture.host.root.agents.list().map((agent) => agent.id)).to.deep.equal([fixture.root.id])
    expect((await running.result).stopReason).to.equal('aborted')
  })

  it('drains thousands of waiting starts in the order they were made', async () => {
    const fixture = await createBudgetFixture({ budget: { maxConcurrent: 1 } })
    const { inprocessRun } = fixture.host.root
    const count = 2000
    const order: number[] = []
    fixture.host.scripted.repeat((request) => {
      const first = request.messages[0]
      order.push(Number(first.role === 'user' && first.content[0].type === 'text' ? first.content[0].text : -1))
      return {}
    })
    const runs: Promise<SubagentRun>[] = []
    for (let n = 0; n < count; n++) {
      const run = inprocessRun.spawn(fixture.request({ prompt: String(n), agentOptions: { provider: 'scripted', model: 'm' } }))
      // each run leaves the count when its result settles; disposing it frees the agent too
      runs.push(
        run.then(async (started) => {
          await started.result
          await started.dispose()
          return started
        }),
      )
    }
    await Promise.all(runs)
    expect(order).to.deep.equal(Array.from({ length: count }, (_, n) => n))
    expect(fixture.budget.usage(fixture.root).children).to.equal(count)
  })

  it('lets waiting starts in when a config update raises maxConcurrent', async () => {
    const fixture = await createBudgetFixture({ budget: { maxConcurrent: 1 } })
    const latch = createLatchModel()
    fixture.host.root.models.register('latch', latch.adapter)
    const { inprocessRun } = fixture.host.root
    const first = await inprocessRun.spawn(fixture.request({ prompt: 'a', agentOptions: latchOptions }))
    const second = inprocessRun.spawn(fixture.request({ prompt: 'b', agentOptions: latchOptions }))
    await latch.entered('a')
    await fixture.fiber.update({ maxConcurrent: 2 })
    const run = await second
    await latch.entered('b')
    expect(latch.waiting).to.deep.equal(['a', 'b'])
    latch.release('a')
    latch.release('b')
    await Promise.all([first.dispose(), run.dispose()])
  })

  it('ends a cancelled parent turn at once when its background subagent call waits for a slot, creating no child', async () => {
    const fixture = await createBudgetFixture({ budget: { maxConcurrent: 1 }, subagentTool: {} })
    const latch = createLatchModel()
    const { root: host } = fixture.host
    host.models.register('latch', latch.adapter)
    const first = await host.inprocessRun.spawn(fixture.request({ prompt: 'a', agentOptions: latchOptions }))
    await latch.entered('a')
    // admission runs in the same synchronous stretch as prepare: once this resolves, the start waits in line
    const prepared = new Promise<void>((resolve) => {
      const off = host.on('subagent/prepare', () => {
        off()
        resolve()
      })
    })
    fixture.host.scripted.push({ toolCalls: [{ id: 'call_bg', name: 'subagent', arguments: { prompt: 'b', background: true } }] })
    fixture.root.followup('start one in the background')
    await prepared
    fixture.root.cancel({ kind: 'user' })
    await fixture.root.whenIdle()
    const events = fixture.root.session.events
    const result = events.find((event) => event.type === 'tool/result')?.data as { isError: boolean; content: unknown[] }
    expect(result.content).to.deep.equal([{ type: 'text', text: 'Error: subagent request was aborted before child publication' }])
    expect(events.at(-1)?.data).to.deep.equal({ turn: 1, reason: { kind: 'aborted', cause: { kind: 'user' } } })
    expect(host.agents.list().map((agent) => agent.id)).to.deep.equal([fixture.root.id, first.id])
    expect(host.subagentTool.pending(fixture.root)).to.deep.equal([])
    latch.release('a')
    await first.dispose()
  })
})
