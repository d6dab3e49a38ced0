import { expect } from 'chai'
import type { Agent, RunEvent, SubagentResult } from '../../lib/types.ts'
import { createDriverHost, createGate } from '../support/driver.ts'

async function collect(iterator: AsyncIterable<RunEvent>): Promise<RunEvent[]> {
  const seen: RunEvent[] = []
  for await (const item of iterator) seen.push(item)
  return seen
}

describe('InProcessRun run.events()', () => {
  it("yields the child's own events in order and ends when the result settles", async () => {
    const host = await createDriverHost()
    const baseline = host.snapshot()
    host.scripted.push({ text: 'done' })
    const run = await host.root.inprocessRun.spawn(host.request())
    const seen = await collect(run.events())
    const result = await run.result
    expect(result.stopReason).to.equal('completed')
    expect(seen.map((item) => item.event)).to.deep.equal([...run.agent.session.events])
    expect(seen.map((item) => item.event.type)).to.include.members(['user/message', 'assistant/message', 'turn/end'])
    for (const item of seen) {
      expect({ agentId: item.agentId, parentId: item.parentId, depth: item.depth }).to.deep.equal({
        agentId: run.id,
        parentId: host.parent.id,
        depth: 1,
      })
    }
    await run.dispose()
    expect(host.snapshot()).to.deep.equal(baseline)
  })

  it("includes a grandchild's events with its lineage", async () => {
    const host = await createDriverHost()
    const grandchildren: string[] = []
    host.root.tools.register({
      name: 'delegate',
      description: 'starts a grandchild',
      parameters: { type: 'object' },
      execute: async (_args: never, exec) => {
        const parent = exec.agent as Agent
        const inner = await host.root.inprocessRun.spawn({ parent, prompt: 'go deeper', signal: exec.signal })
        grandchildren.push(inner.id)
        const result: SubagentResult = await inner.result
        return result.stopReason
      },
    })
    host.scripted.push(
      { toolCalls: [{ id: 'd1', name: 'delegate', arguments: '{}' }] },
      { text: 'deep answer' },
      { text: 'done' },
    )
    const run = await host.root.inprocessRun.spawn(host.request())
    const seen = await collect(run.events())
    expect((await run.result).stopReason).to.equal('completed')
    const [grandchild] = grandchildren
    const deep = seen.filter((item) => item.agentId === grandchild)
    expect(deep.length).to.be.greaterThan(0)
    expect(deep.map((item) => item.event.type)).to.include('assistant/message')
    for (const item of deep) expect({ parentId: item.parentId, depth: item.depth }).to.deep.equal({ parentId: run.id, depth: 2 })
    expect(seen.every((item) => item.agentId === run.id || item.agentId === grandchild)).to.equal(true)
    await run.dispose()
  })

  it('leaves no listener behind when the loop breaks while the run is live', async () => {
    const host = await createDriverHost()
    const gate = createGate()
    host.root.models.register('gated', gate.adapter)
    const baseline = host.snapshot()
    const run = await host.root.inprocessRun.spawn(host.request({ agentOptions: { provider: 'gated' } }))
    const live = host.snapshot()
    const iterator = run.events()
    expect(host.snapshot().listeners).to.equal(live.listeners + 1)
    for await (const item of iterator) {
      expect(item.agentId).to.equal(run.id)
      break
    }
    expect(host.snapshot().listeners).to.equal(live.listeners)
    await gate.entered
    gate.open()
    expect((await run.result).stopReason).to.equal('completed')
    await run.dispose()
    expect(host.snapshot()).to.deep.equal(baseline)
  })

  it('ends the iteration and removes its listener when the run is disposed mid-iteration', async () => {
    const host = await createDriverHost()
    const gate = createGate()
    host.root.models.register('gated', gate.adapter)
    const baseline = host.snapshot()
    const run = await host.root.inprocessRun.spawn(host.request({ agentOptions: { provider: 'gated' } }))
    const iteration = collect(run.events())
    await gate.entered
    await run.dispose()
    const seen = await iteration
    expect(seen.at(-1)?.event.type).to.equal('turn/end')
    expect((await run.result).stopReason).to.equal('aborted')
    expect(host.snapshot()).to.deep.equal(baseline)
  })

  it('replays the own events of a run that already settled, then ends', async () => {
    const host = await createDriverHost()
    const baseline = host.snapshot()
    host.scripted.push({ text: 'done' })
    const run = await host.root.inprocessRun.spawn(host.request())
    await run.result
    const seen = await collect(run.events())
    expect(seen.map((item) => item.event)).to.deep.equal([...run.agent.session.events])
    await run.dispose()
    expect(host.snapshot()).to.deep.equal(baseline)
  })

  it('answers next() calls made before any event arrived in call order, then ends them all', async () => {
    const host = await createDriverHost()
    const gate = createGate()
    host.root.models.register('gated', gate.adapter)
    const run = await host.root.inprocessRun.spawn(host.request({ agentOptions: { provider: 'gated' } }))
    const iterator = run.events()
    const own = run.agent.session.events.length
    for (let i = 0; i < own; i++) await iterator.next()
    const pending = [iterator.next(), iterator.next(), iterator.next()]
    await gate.entered
    gate.open()
    await run.result
    const answered = await Promise.all(pending)
    const appended = run.agent.session.events.slice(own, own + 3)
    expect(answered.map((step) => (step.done ? undefined : step.value.event))).to.deep.equal(appended)
    await run.dispose()
    expect(await iterator.next()).to.deep.equal({ value: undefined, done: true })
  })

  it('passes over the events of live agents whose headers name each other as parents, instead of walking their loop without end', async () => {
    const host = await createDriverHost()
    // created with headers a hand-edited file could hold: each the other's parent, deeper than the child
    const loop = [
      await host.root.agents.create({ sessionId: 'loop-a', header: { parentSession: 'loop-b', delegationDepth: 5 } }),
      await host.root.agents.create({ sessionId: 'loop-b', header: { parentSession: 'loop-a', delegationDepth: 5 } }),
    ]
    const gate = createGate()
    host.root.models.register('gated', gate.adapter)
    const run = await host.root.inprocessRun.spawn(host.request({ agentOptions: { provider: 'gated' } }))
    const seen = collect(run.events())
    await gate.entered
    loop[0]!.agent.session.append('note/loop', {})
    gate.open()
    expect((await seen).map((item) => item.agentId)).to.deep.equal(run.agent.session.events.map(() => run.id))
    await run.dispose()
    await Promise.all(loop.map((handle) => handle.dispose()))
  })
})

