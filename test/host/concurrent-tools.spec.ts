import { expect } from 'chai'
import sinon from 'sinon'
import { Tools } from '../../plugins/host/tools/index.ts'
import type { Agent, SessionEventData, ToolExecution, ToolResult } from '../../lib/types.ts'
import { drain, gatedTool } from './gated-tool.ts'
import { lastOf, nextEvent, scene, typesOf } from '../support/scene.ts'

type ToolResultEvent = SessionEventData['tool/result']

/** The `tool/result` events of the agent's session, in order. */
function recorded(agent: Agent): ToolResultEvent[] {
  return agent.session.events.filter((event) => event.type === 'tool/result').map((event) => event.data as ToolResultEvent)
}

function calls(name: string, ...ids: string[]) {
  return ids.map((id) => ({ id, name, arguments: '{}' }))
}

function done(callId: string, name = 'gated'): ToolResultEvent {
  return { turn: 1, step: 1, callId, name, isError: false, content: [{ type: 'text', text: `${callId} done` }] }
}

function textOf(result: ToolResult): string {
  return result.content.map((block) => (block.type === 'text' ? block.text : '')).join('')
}

describe('concurrent tool calls: batches (SPEC §8.1)', () => {
  it('runs consecutive calls of a concurrent tool at once', async () => {
    const s = await scene()
    const gated = gatedTool({ concurrent: true })
    s.root.tools.register(gated.definition)
    const { agent } = await s.create()
    s.scripted.push({ toolCalls: calls('gated', 'c1', 'c2', 'c3') }, { text: 'all done' })
    agent.followup('fan out')
    // all three bodies are running before any of them was let go
    await gated.whenStarted(3)
    expect(gated.inFlight).to.equal(3)
    for (const id of ['c1', 'c2', 'c3']) gated.release(id)
    await agent.whenIdle()
    expect(gated.maxInFlight).to.equal(3)
    expect(recorded(agent)).to.deep.equal([done('c1'), done('c2'), done('c3')])
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'completed' } })
  })

  it('runs calls of a tool that is not concurrent one by one, as before', async () => {
    const s = await scene()
    const gated = gatedTool()
    s.root.tools.register(gated.definition)
    const { agent } = await s.create()
    s.scripted.push({ toolCalls: calls('gated', 'c1', 'c2') }, { text: 'all done' })
    agent.followup('one by one')
    await gated.whenStarted(1)
    await drain()
    expect(gated.started).to.deep.equal(['c1'])
    gated.release('c1')
    await gated.whenStarted(2)
    gated.release('c2')
    await agent.whenIdle()
    expect(gated.maxInFlight).to.equal(1)
    expect(recorded(agent)).to.deep.equal([done('c1'), done('c2')])
  })

  it('holds a call to a non-concurrent tool until every earlier call finished, and every later call until it finished', async () => {
    const s = await scene()
    const fast = gatedTool({ name: 'fast', concurrent: true })
    const barrier = gatedTool({ name: 'barrier' })
    s.root.tools.register(fast.definition)
    s.root.tools.register(barrier.definition)
    const { agent } = await s.create()
    s.scripted.push(
      { toolCalls: [...calls('fast', 'a1', 'a2'), ...calls('barrier', 'b'), ...calls('fast', 'a3', 'a4')] },
      { text: 'all done' },
    )
    agent.followup('go')
    await fast.whenStarted(2)
    await drain()
    expect(barrier.started).to.deep.equal([])
    fast.release('a2')
    await drain()
    expect(barrier.started, 'the barrier waits for a1 too').to.deep.equal([])
    fast.release('a1')
    await barrier.whenStarted(1)
    await drain()
    expect(fast.started, 'the barrier holds back a3 and a4').to.deep.equal(['a1', 'a2'])
    barrier.release('b')
    await fast.whenStarted(4)
    expect(fast.inFlight).to.equal(2)
    fast.release('a4')
    fast.release('a3')
    await agent.whenIdle()
    expect(recorded(agent).map((event) => event.callId)).to.deep.equal(['a1', 'a2', 'b', 'a3', 'a4'])
  })

  it('treats a call to an unknown tool as a barrier', async () => {
    const s = await scene()
    const gated = gatedTool({ concurrent: true })
    s.root.tools.register(gated.definition)
    const { agent } = await s.create()
    s.scripted.push({ toolCalls: [...calls('gated', 'c1'), ...calls('nope', 'x'), ...calls('gated', 'c2')] }, { text: 'all done' })
    agent.followup('go')
    await gated.whenStarted(1)
    await drain()
    expect(gated.started).to.deep.equal(['c1'])
    gated.release('c1')
    await gated.whenStarted(2)
    gated.release('c2')
    await agent.whenIdle()
    expect(recorded(agent)).to.deep.equal([
      done('c1'),
      { turn: 1, step: 1, callId: 'x', name: 'nope', isError: true, content: [{ type: 'text', text: 'Error: unknown tool "nope"' }] },
      done('c2'),
    ])
  })

  it('treats a call to a concurrent tool the agent cannot see as a barrier', async () => {
    const s = await scene()
    const gated = gatedTool({ concurrent: true })
    s.root.tools.register(gated.definition)
    s.root.tools.register({ ...gatedTool({ name: 'hidden', concurrent: true }).definition })
    const { agent } = await s.create()
    agent.ctx.tools.restrict({ deny: ['hidden'] })
    expect(s.root.tools.isConcurrent('hidden', agent)).to.equal(false)
    s.scripted.push({ toolCalls: [...calls('gated', 'c1'), ...calls('hidden', 'h'), ...calls('gated', 'c2')] }, { text: 'all done' })
    agent.followup('go')
    await gated.whenStarted(1)
    await drain()
    expect(gated.started).to.deep.equal(['c1'])
    gated.release('c1')
    await gated.whenStarted(2)
    gated.release('c2')
    await agent.whenIdle()
    expect(recorded(agent)[1]).to.deep.include({ callId: 'h', isError: true, content: [{ type: 'text', text: 'Error: unknown tool "hidden"' }] })
  })

  it('follows a scoped tool that shadows a global one: a non-concurrent shadow is a barrier', async () => {
    const s = await scene()
    const global = gatedTool({ concurrent: true })
    const shadow = gatedTool({ concurrent: false })
    s.root.tools.register(global.definition)
    const { agent } = await s.create()
    const other = await s.create()
    agent.ctx.tools.register(shadow.definition)
    expect(s.root.tools.isConcurrent('gated', agent)).to.equal(false)
    expect(s.root.tools.isConcurrent('gated', other.agent)).to.equal(true)
    expect(s.root.tools.isConcurrent('gated')).to.equal(true)
  })
})

describe('concurrent tool calls: results in model order (SPEC §8.1)', () => {
  it('appends results in model order when calls finish in reverse order', async () => {
    const s = await scene()
    const gated = gatedTool({ concurrent: true })
    s.root.tools.register(gated.definition)
    const { agent } = await s.create()
    const reported: string[] = []
    s.on('tools/result', (exec: ToolExecution) => void reported.push(exec.callId))
    s.scripted.push({ toolCalls: calls('gated', 'c1', 'c2', 'c3') }, { text: 'all done' })
    agent.followup('go')
    await gated.whenStarted(3)
    gated.release('c3')
    gated.release('c2')
    await drain()
    expect(reported, 'tools/result follows completion').to.deep.equal(['c3', 'c2'])
    expect(recorded(agent), 'nothing is appended before c1 finishes').to.deep.equal([])
    gated.release('c1')
    await agent.whenIdle()
    expect(gated.finished).to.deep.equal(['c3', 'c2', 'c1'])
    expect(recorded(agent)).to.deep.equal([done('c1'), done('c2'), done('c3')])
  })

  it('appends a result as soon as it and every earlier call finished', async () => {
    const s = await scene()
    const gated = gatedTool({ concurrent: true })
    s.root.tools.register(gated.definition)
    const { agent } = await s.create()
    s.scripted.push({ toolCalls: calls('gated', 'c1', 'c2', 'c3') }, { text: 'all done' })
    agent.followup('go')
    await gated.whenStarted(3)
    const first = nextEvent(s.root, agent, 'tool/result')
    gated.release('c1')
    expect((await first).data).to.deep.equal(done('c1'))
    expect(gated.inFlight).to.equal(2)
    gated.release('c3')
    await drain()
    expect(recorded(agent).map((event) => event.callId)).to.deep.equal(['c1'])
    gated.release('c2')
    await agent.whenIdle()
    expect(recorded(agent).map((event) => event.callId)).to.deep.equal(['c1', 'c2', 'c3'])
  })

  it('sends the next model request exactly what a one-by-one run would have sent', async () => {
    const runs: unknown[] = []
    for (const concurrent of [false, true]) {
      const s = await scene()
      const gated = gatedTool({ concurrent })
      s.root.tools.register(gated.definition)
      const { agent } = await s.create()
      s.scripted.push({ toolCalls: calls('gated', 'c1', 'c2', 'c3') }, { text: 'all done' })
      agent.followup('go')
      // one by one, each release lets the next call start; at once, c3 finishes first
      for (const id of concurrent ? ['c3', 'c2', 'c1'] : ['c1', 'c2', 'c3']) {
        await gated.whenStarted(concurrent ? 3 : Number(id.slice(1)))
        gated.release(id)
      }
      await agent.whenIdle()
      runs.push({ messages: s.scripted.requests[1].messages, events: typesOf(agent) })
      await s.end()
    }
    expect(runs[1]).to.deep.equal(runs[0])
  })
})

describe('concurrent tool calls: faults and abort (SPEC §8.1)', () => {
  it('turns one call’s throw into its error result while its siblings keep running', async () => {
    const s = await scene()
    const gated = gatedTool({ concurrent: true })
    s.root.tools.register(gated.definition)
    const { agent } = await s.create()
    s.scripted.push({ toolCalls: calls('gated', 'c1', 'c2', 'c3') }, { text: 'recovered' })
    agent.followup('go')
    await gated.whenStarted(3)
    gated.fail('c2', new Error('boom'))
    await drain()
    expect(gated.finished).to.deep.equal(['c2'])
    expect(gated.inFlight).to.equal(2)
    gated.release('c1')
    gated.release('c3')
    await agent.whenIdle()
    expect(recorded(agent)).to.deep.equal([
      done('c1'),
      { turn: 1, step: 1, callId: 'c2', name: 'gated', isError: true, content: [{ type: 'text', text: 'Error: boom' }] },
      done('c3'),
    ])
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'completed' } })
  })

  it('hands every running call the turn’s signal and ends the turn aborted once they all returned', async () => {
    const s = await scene()
    const gated = gatedTool({ concurrent: true })
    const later = gatedTool({ name: 'later' })
    s.root.tools.register(gated.definition)
    s.root.tools.register(later.definition)
    const { agent } = await s.create()
    s.scripted.push({ toolCalls: [...calls('gated', 'c1', 'c2', 'c3'), ...calls('later', 'l1')] })
    agent.followup('go')
    await gated.whenStarted(3)
    const signals = [...gated.signals.values()]
    expect(new Set(signals).size, 'one signal for the whole turn').to.equal(1)
    agent.cancel({ kind: 'user' })
    expect(signals.every((signal) => signal.aborted)).to.equal(true)
    await agent.whenIdle()
    expect(gated.finished).to.have.members(['c1', 'c2', 'c3'])
    expect(later.started, 'no call starts after the abort').to.deep.equal([])
    expect(recorded(agent).map((event) => [event.callId, event.isError])).to.deep.equal([
      ['c1', true],
      ['c2', true],
      ['c3', true],
    ])
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'aborted', cause: { kind: 'user' } } })
    expect(s.scripted.requests).to.have.length(1)
  })

  it('waits for a call that ignores its signal before ending the aborted turn', async () => {
    const s = await scene()
    const gated = gatedTool({ concurrent: true, ignoresSignal: (id) => id === 'stubborn' })
    s.root.tools.register(gated.definition)
    const { agent } = await s.create()
    s.scripted.push({ toolCalls: calls('gated', 'polite', 'stubborn') })
    agent.followup('go')
    await gated.whenStarted(2)
    agent.cancel({ kind: 'user' })
    let idle = false
    const idling = agent.whenIdle().then(() => void (idle = true))
    await drain()
    expect(gated.finished).to.deep.equal(['polite'])
    expect(idle).to.equal(false)
    expect(agent.status).to.equal('running')
    expect(typesOf(agent)).to.not.include('turn/end')
    expect(recorded(agent).map((event) => event.callId), 'polite is first in model order: it waits for nothing').to.deep.equal(['polite'])
    gated.release('stubborn')
    await idling
    expect(recorded(agent).map((event) => [event.callId, event.isError])).to.deep.equal([
      ['polite', true],
      ['stubborn', false],
    ])
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'aborted', cause: { kind: 'user' } } })
  })

  it('cancels a batch with {kind: "disposed"} when its agent is disposed mid-batch, leaving nothing behind', async () => {
    const s = await scene()
    const gated = gatedTool({ concurrent: true })
    s.root.tools.register(gated.definition)
    const handle = await s.create()
    const { agent } = handle
    agent.ctx.tools.register(gatedTool({ name: 'scoped', concurrent: true }).definition)
    s.scripted.push({ toolCalls: calls('gated', 'c1', 'c2', 'c3') })
    agent.followup('go')
    await gated.whenStarted(3)
    gated.release('c2')
    await handle.dispose()
    expect(gated.inFlight).to.equal(0)
    expect(recorded(agent).map((event) => [event.callId, event.isError])).to.deep.equal([
      ['c1', true],
      ['c2', false],
      ['c3', true],
    ])
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'aborted', cause: { kind: 'disposed' } } })
    expect(s.root.agents.get(agent.id)).to.equal(undefined)
  })
})

describe('concurrent tool calls: a failing pipeline (host fault)', () => {
  afterEach(() => sinon.restore())

  for (const how of ['rejects', 'throws synchronously'] as const) {
    it(`ends the turn error after every sibling returned when one call's pipeline ${how}`, async () => {
      const s = await scene()
      const gated = gatedTool({ concurrent: true })
      s.root.tools.register(gated.definition)
      const execute = Tools.prototype.executeTurnCall
      sinon.stub(Tools.prototype, 'executeTurnCall').callsFake(function (this: Tools, call, agent, source) {
        if (call.id !== 'broken') return execute.call(this, call, agent, source)
        if (how === 'throws synchronously') throw new Error('pipeline broke')
        return Promise.reject(new Error('pipeline broke'))
      })
      const { agent } = await s.create()
      s.scripted.push({ toolCalls: calls('gated', 'c1', 'broken', 'c3') })
      agent.followup('go')
      await gated.whenStarted(2)
      await drain()
      expect(agent.status, 'the turn waits for the running siblings').to.equal('running')
      expect(recorded(agent)).to.deep.equal([])
      gated.release('c3')
      gated.release('c1')
      await agent.whenIdle()
      expect(gated.finished).to.deep.equal(['c3', 'c1'])
      expect(recorded(agent), 'nothing after the fault is appended').to.deep.equal([done('c1')])
      expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'error', error: { message: 'pipeline broke' } } })
      sinon.restore()
    })
  }
})

describe('concurrent tool calls: the pipeline per call (SPEC §8.1, §1.5)', () => {
  it('enters every call’s pipeline in model order before any body of the batch runs', async () => {
    const s = await scene()
    const order: string[] = []
    const tool = (name: string) => ({
      name,
      description: name,
      parameters: { type: 'object' },
      concurrent: true,
      execute: (_args: never, exec: ToolExecution) => void order.push(`body ${exec.callId}`),
    })
    s.root.tools.register(tool('one'))
    s.root.tools.register(tool('two'))
    s.on('tools/pre-execute', (exec, next) => {
      order.push(`pre ${exec.callId}`)
      return next()
    })
    s.root.tools.guard((exec) => void order.push(`guard ${exec.callId}`))
    const { agent } = await s.create()
    s.scripted.push({ toolCalls: [...calls('one', 'c1'), ...calls('two', 'c2'), ...calls('one', 'c3')] }, { text: 'done' })
    agent.followup('go')
    await agent.whenIdle()
    expect(order.slice(0, 3)).to.deep.equal(['pre c1', 'pre c2', 'pre c3'])
    for (const id of ['c1', 'c2', 'c3']) {
      expect(order.indexOf(`guard ${id}`), `guard ${id}`).to.be.greaterThan(order.indexOf(`pre ${id}`))
      expect(order.indexOf(`body ${id}`), `body ${id}`).to.be.greaterThan(order.indexOf(`guard ${id}`))
    }
  })

  it('gives every call its own execution, hooks and guard decision', async () => {
    const s = await scene()
    const gated = gatedTool({ concurrent: true })
    s.root.tools.register(gated.definition)
    const seen = new Map<string, Set<ToolExecution>>()
    const see = (exec: ToolExecution) => {
      if (!seen.has(exec.callId)) seen.set(exec.callId, new Set())
      seen.get(exec.callId)!.add(exec)
    }
    s.on('tools/pre-execute', (exec, next) => {
      see(exec)
      return exec.callId === 'denied' ? { kind: 'deny', reason: 'not this one' } : next()
    })
    s.on('tools/post-execute', (exec, _result, next) => {
      see(exec)
      return exec.callId === 'spoiled' ? { isError: true, content: [{ type: 'text', text: 'Error: spoiled after the fact' }] } : next()
    })
    const finals = new Map<string, string>()
    s.on('tools/result', (exec: ToolExecution, result: ToolResult) => {
      see(exec)
      finals.set(exec.callId, textOf(result))
    })
    const { agent } = await s.create()
    agent.ctx.tools.guard((exec) => {
      see(exec)
      return exec.callId === 'guarded' ? 'guarded away' : undefined
    })
    s.scripted.push({ toolCalls: calls('gated', 'ok', 'denied', 'guarded', 'spoiled') }, { text: 'done' })
    agent.followup('go')
    await gated.whenStarted(2)
    expect(gated.started).to.deep.equal(['ok', 'spoiled'])
    gated.release('spoiled')
    gated.release('ok')
    await agent.whenIdle()
    expect([...seen.values()].map((execs) => execs.size)).to.deep.equal([1, 1, 1, 1])
    expect(Object.fromEntries(finals)).to.deep.equal({
      denied: 'Error: not this one',
      guarded: 'Error: guarded away',
      spoiled: 'Error: spoiled after the fact',
      ok: 'ok done',
    })
    expect(recorded(agent).map((event) => [event.callId, event.isError])).to.deep.equal([
      ['ok', false],
      ['denied', true],
      ['guarded', true],
      ['spoiled', true],
    ])
  })

  it('asks agent/turn-stop once, after every result of the step was appended', async () => {
    const s = await scene()
    const gated = gatedTool({ concurrent: true })
    s.root.tools.register(gated.definition)
    const { agent } = await s.create()
    const asked: number[] = []
    agent.ctx.on('agent/turn-stop', () => {
      asked.push(recorded(agent).length)
      return true
    })
    s.scripted.push({ toolCalls: calls('gated', 'c1', 'c2') })
    agent.followup('go')
    await gated.whenStarted(2)
    gated.release('c2')
    gated.release('c1')
    await agent.whenIdle()
    expect(asked).to.deep.equal([2])
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'completed' } })
  })

  it('runs no call of a truncated step', async () => {
    const s = await scene()
    const gated = gatedTool({ concurrent: true })
    s.root.tools.register(gated.definition)
    const { agent } = await s.create()
    s.scripted.push({ toolCalls: calls('gated', 'c1', 'c2'), finish: 'max-tokens' })
    agent.followup('go')
    await agent.whenIdle()
    expect(gated.started).to.deep.equal([])
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'max-tokens' } })
  })

  it('ends the turn MAX_STEPS after the last allowed step’s batch has run', async () => {
    const s = await scene()
    const gated = gatedTool({ concurrent: true })
    s.root.tools.register(gated.definition)
    const { agent } = await s.create({ agentOptions: { maxSteps: 1 } })
    s.scripted.push({ toolCalls: calls('gated', 'c1', 'c2') })
    agent.followup('go')
    await gated.whenStarted(2)
    gated.release('c1')
    gated.release('c2')
    await agent.whenIdle()
    expect(recorded(agent)).to.have.length(2)
    expect(lastOf(agent, 'turn/end')).to.deep.equal({
      turn: 1,
      reason: { kind: 'error', error: { message: 'turn exceeded maxSteps 1', code: 'MAX_STEPS' } },
    })
  })
})

describe('ToolDefinition.concurrent (SPEC §8.1)', () => {
  it('rejects a definition whose concurrent is not a boolean, naming the field', async () => {
    const s = await scene()
    const definition = { ...gatedTool().definition, concurrent: 'yes' as unknown as boolean }
    expect(() => s.root.tools.register(definition)).to.throw(TypeError, 'tool "gated" concurrent must be a boolean')
    expect(s.root.tools.get('gated')).to.equal(undefined)
  })

  it('defaults to false and is not part of the schema the model sees', async () => {
    const s = await scene()
    s.root.tools.register(gatedTool({ name: 'plain' }).definition)
    s.root.tools.register(gatedTool({ name: 'parallel', concurrent: true }).definition)
    expect(s.root.tools.isConcurrent('plain')).to.equal(false)
    expect(s.root.tools.isConcurrent('parallel')).to.equal(true)
    expect(s.root.tools.isConcurrent('missing')).to.equal(false)
    expect(s.root.tools.get('parallel')).to.deep.equal({ name: 'parallel', description: 'The parallel tool.', parameters: { type: 'object' } })
  })
})
