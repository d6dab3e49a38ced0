import { expect } from 'chai'
import sinon from 'sinon'
import { Context } from 'cordis'
import type { Agent, ModelAdapter, ModelRequest, StreamPart } from '../../lib/types.ts'
import { Host } from '../../plugins/host/index.ts'
import { ScriptedModel } from '../../plugins/scripted-model/index.ts'
import { lastOf, nextEvent, rejectionOf, scene } from '../support/scene.ts'
import { createHost } from '../support/harness.ts'

type Scene = Awaited<ReturnType<typeof scene>>

/** A request for calling the adapter directly. */
function request(agent: Agent, signal = new AbortController().signal): ModelRequest {
  return { agent, model: 'test', system: '', messages: [], signal }
}

async function collect(adapter: ModelAdapter, req: ModelRequest): Promise<StreamPart[]> {
  const parts: StreamPart[] = []
  for await (const part of adapter.stream(req)) parts.push(part)
  return parts
}

function adapterOf(s: Scene): ModelAdapter {
  return s.root.models.resolve('scripted')!
}

describe('ScriptedModel.push: response entries (SPEC §1.7)', () => {
  it('streams text, then tool calls, then a finish with usage', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push({
      text: 'thinking',
      toolCalls: [{ id: 'c1', name: 'echo', arguments: '{"text":"a"}' }],
      usage: { inputTokens: 4, outputTokens: 2 },
    })
    expect(await collect(adapterOf(s), request(agent))).to.deep.equal([
      { type: 'text-delta', text: 'thinking' },
      { type: 'tool-call', id: 'c1', name: 'echo', arguments: '{"text":"a"}' },
      { type: 'finish', reason: 'tool-calls', usage: { inputTokens: 4, outputTokens: 2 } },
    ])
  })

  it('streams the text, then one text delta per element of deltas, skipping empty ones', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push({ text: 'a', deltas: ['b', '', 'c'] })
    expect(await collect(adapterOf(s), request(agent))).to.deep.equal([
      { type: 'text-delta', text: 'a' },
      { type: 'text-delta', text: 'b' },
      { type: 'text-delta', text: 'c' },
      { type: 'finish', reason: 'stop' },
    ])
  })

  it('reads deltas one element per part as the stream goes, not the whole list up front', async () => {
    const s = await scene()
    const { agent } = await s.create()
    const read: number[] = []
    const deltas = new Proxy(['a', '', 'b', 'c'], {
      get(target, key, receiver) {
        if (typeof key === 'string' && /^\d+$/.test(key)) read.push(Number(key))
        return Reflect.get(target, key, receiver)
      },
    })
    s.scripted.push({ deltas })
    const parts = adapterOf(s).stream(request(agent))[Symbol.asyncIterator]()
    const first = await parts.next()
    const readAfterFirst = [...read]
    const second = await parts.next()
    expect({ first: first.value, readAfterFirst, second: second.value, read }).to.deep.equal({
      first: { type: 'text-delta', text: 'a' },
      readAfterFirst: [0],
      second: { type: 'text-delta', text: 'b' },
      read: [0, 1, 2],
    })
  })

  it('finishes with stop when there are no tool calls', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push({ text: 'plain' })
    expect(await collect(adapterOf(s), request(agent))).to.deep.equal([
      { type: 'text-delta', text: 'plain' },
      { type: 'finish', reason: 'stop' },
    ])
  })

  it('honours an explicit max-tokens finish', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push({ text: 'cut', finish: 'max-tokens' })
    expect((await collect(adapterOf(s), request(agent))).at(-1)).to.deep.equal({ type: 'finish', reason: 'max-tokens' })
  })

  it('serializes tool-call arguments given as a value and invents missing ids', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push({ toolCalls: [{ name: 'echo', arguments: { text: 'a' } }] })
    const [call] = await collect(adapterOf(s), request(agent))
    expect(call).to.include({ type: 'tool-call', name: 'echo', arguments: '{"text":"a"}' })
    expect((call as { id: string }).id).to.be.a('string').and.not.equal('')
  })

  it('answers calls in script order', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push({ text: 'one' }).push({ text: 'two' })
    agent.followup('first')
    agent.followup('second')
    await agent.whenIdle()
    const texts = agent.session.events
      .filter((event) => event.type === 'assistant/message')
      .map((event) => (event.data as { content: { text: string }[] }).content[0].text)
    expect(texts).to.deep.equal(['one', 'two'])
    expect(s.scripted.pending).to.equal(0)
  })
})

describe('ScriptedModel.push: other entries (SPEC §1.7)', () => {
  it('calls a function entry with the request and streams what it returns', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push((req) => ({ text: `saw ${req.messages.length} message(s)` }))
    agent.followup('hello')
    await agent.whenIdle()
    expect(lastOf(agent, 'assistant/message')).to.deep.include({ content: [{ type: 'text', text: 'saw 1 message(s)' }] })
  })

  it('throws an Error entry from the adapter, ending the turn with its message', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push(new Error('upstream 503'))
    agent.followup('hello')
    await agent.whenIdle()
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'error', error: { message: 'upstream 503' } } })
  })

  it('throws an Error a function entry returns', async () => {
    const s = await scene()
    const { agent } = await s.create()
    const failure = new Error('decided to fail')
    s.scripted.push(() => failure)
    expect(await rejectionOf(collect(adapterOf(s), request(agent)))).to.equal(failure)
  })

  it('streams `partial` for a hang entry, then fails with the signal’s reason once it aborts', async () => {
    const s = await scene()
    const { agent } = await s.create()
    const controller = new AbortController()
    const reason = new Error('stop hanging')
    s.scripted.push('hang')
    const iterator = adapterOf(s).stream(request(agent, controller.signal))[Symbol.asyncIterator]()
    expect(await iterator.next()).to.deep.equal({ done: false, value: { type: 'text-delta', text: 'partial' } })
    const waiting = iterator.next()
    controller.abort(reason)
    expect(await rejectionOf(waiting)).to.equal(reason)
  })

  it('hangs when a function entry returns `hang`', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push(() => 'hang')
    const streaming = nextEvent(s.root, agent, 'assistant/delta')
    agent.followup('hello')
    expect((await streaming).data).to.deep.equal({ turn: 1, step: 1, text: 'partial' })
    agent.cancel({ kind: 'user' })
    await agent.whenIdle()
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'aborted', cause: { kind: 'user' } } })
  })

  it('throws `scripted model has no more responses` once the script is used up', async () => {
    const s = await scene()
    const { agent } = await s.create()
    const error = await rejectionOf(collect(adapterOf(s), request(agent)))
    expect(error.message).to.equal('scripted model has no more responses')
    expect((error as { code?: unknown }).code).to.equal('SCRIPT_EXHAUSTED')
  })

  it('rejects next() rather than throwing when a tool call\'s arguments cannot be JSON', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push({ toolCalls: [{ id: 'c1', name: 'echo', arguments: { n: 1n } as never }] })
    const parts = adapterOf(s).stream(request(agent))[Symbol.asyncIterator]()
    let pending: Promise<IteratorResult<StreamPart>> | undefined
    expect(() => {
      pending = parts.next()
    }).not.to.throw()
    const error = await rejectionOf(pending as Promise<unknown>)
    expect(error).to.be.instanceOf(TypeError)
    expect(await parts.next()).to.deep.equal({ value: undefined, done: true })
  })

  it('ends the turn error with that message when the script runs out mid-turn', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push({ toolCalls: [{ name: 'missing', arguments: '{}' }] })
    agent.followup('hello')
    await agent.whenIdle()
    expect(lastOf(agent, 'turn/end')).to.deep.equal({
      turn: 1,
      reason: { kind: 'error', error: { message: 'scripted model has no more responses', code: 'SCRIPT_EXHAUSTED' } },
    })
  })
})

describe('ScriptedModel.requests (SPEC §1.7)', () => {
  it('records every request with its system prompt, tools, maxTokens, signal and messages', async () => {
    const s = await scene()
    s.root.systemPrompt.section({ name: 'persona', order: 0, text: 'Be brief.' })
    s.root.tools.register({ name: 'noop', description: 'Does nothing.', parameters: { type: 'object' }, execute: () => 'done' })
    const { agent } = await s.create({ agentOptions: { maxTokens: 99 } })
    s.scripted.push({ toolCalls: [{ id: 'c1', name: 'noop', arguments: '{}' }] }, { text: 'finished' })
    agent.followup('hello')
    await agent.whenIdle()
    const [first, second] = s.scripted.requests
    expect(s.scripted.requests).to.have.length(2)
    expect(first).to.include({ agent, model: 'test', system: 'Be brief.', maxTokens: 99 })
    expect(first.tools).to.deep.equal([{ name: 'noop', description: 'Does nothing.', parameters: { type: 'object' } }])
    expect(first.signal).to.be.an.instanceOf(AbortSignal)
    expect(first.messages).to.deep.equal([{ role: 'user', content: [{ type: 'text', text: 'hello' }] }])
    expect(second.messages).to.have.length(3)
  })

  it('keeps each request’s messages as they were when it was sent', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push({ text: 'one' }, { text: 'two' })
    agent.followup('first')
    await agent.whenIdle()
    agent.followup('second')
    await agent.whenIdle()
    expect(s.scripted.requests[0].messages).to.have.length(1)
    expect(s.scripted.requests[1].messages).to.have.length(3)
  })

  it('forgets the script and the requests on reset', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push({ text: 'one' }, { text: 'unused' })
    agent.followup('first')
    await agent.whenIdle()
    s.scripted.reset()
    expect(s.scripted.requests).to.deep.equal([])
    expect(s.scripted.pending).to.equal(0)
  })

  it('answers with the repeat entry once the script is used up', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push({ text: 'scripted' }).repeat({ text: 'again' })
    for (const message of ['a', 'b', 'c']) agent.followup(message)
    await agent.whenIdle()
    const texts = agent.session.events
      .filter((event) => event.type === 'assistant/message')
      .map((event) => (event.data as { content: { text: string }[] }).content[0].text)
    expect(texts).to.deep.equal(['scripted', 'again', 'again'])
    s.scripted.repeat(undefined)
  })
})

describe('ScriptedModel config (SPEC §1.7)', () => {
  it('serves another provider name and can keep no requests', async () => {
    const root = new Context()
    await root.plugin(Host, { maxSteps: 8 })
    await root.plugin(ScriptedModel, { provider: 'alt', record: false })
    const handle = await root.agents.create({ agentOptions: { provider: 'alt', model: 'm' } })
    root.scripted.push({ text: 'from alt' })
    handle.agent.followup('hello')
    await handle.agent.whenIdle()
    expect(lastOf(handle.agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'completed' } })
    expect(root.scripted.requests).to.deep.equal([])
    expect(root.models.resolve('scripted')).to.equal(undefined)
    await handle.dispose()
  })

  it('takes its adapter away when it is unloaded', async () => {
    const root = new Context()
    await root.plugin(Host, { maxSteps: 8 })
    const fiber = root.plugin(ScriptedModel, {} as ScriptedModel.Config)
    await fiber
    await fiber.dispose()
    const handle = await root.agents.create({ sessionId: 'a', agentOptions: { provider: 'scripted', model: 'm' } })
    handle.agent.followup('hello')
    await handle.agent.whenIdle()
    expect(lastOf(handle.agent, 'turn/end')).to.deep.equal({
      turn: 1,
      reason: { kind: 'error', error: { message: 'no model adapter for provider "scripted"', code: 'NO_MODEL' } },
    })
    await handle.dispose()
  })
})

describe('models.register (SPEC §1.7)', () => {
  const fixed = (text: string): ModelAdapter => ({
    async *stream() {
      yield { type: 'text-delta', text }
      yield { type: 'finish', reason: 'stop' }
    },
  })

  it('lets an adapter registered through agent.ctx shadow the global one for that agent only', async () => {
    const s = await scene()
    const shadowed = await s.create()
    const plain = await s.create()
    shadowed.agent.ctx.models.register('scripted', fixed('private model'))
    s.scripted.push({ text: 'scripted model' })
    shadowed.agent.followup('hello')
    plain.agent.followup('hello')
    await Promise.all([shadowed.agent.whenIdle(), plain.agent.whenIdle()])
    expect(lastOf(shadowed.agent, 'assistant/message')).to.deep.include({ content: [{ type: 'text', text: 'private model' }] })
    expect(lastOf(plain.agent, 'assistant/message')).to.deep.include({ content: [{ type: 'text', text: 'scripted model' }] })
    expect(s.scripted.requests.map((req) => req.agent)).to.deep.equal([plain.agent])
  })

  it('routes to the newest global adapter and back to the previous one when it goes', async () => {
    const s = await scene()
    const { agent } = await s.create()
    const remove = s.root.models.register('scripted', fixed('newer'))
    expect(s.root.models.resolve('scripted', agent)).to.not.equal(undefined)
    agent.followup('one')
    await agent.whenIdle()
    remove()
    s.scripted.push({ text: 'original' })
    agent.followup('two')
    await agent.whenIdle()
    const texts = agent.session.events
      .filter((event) => event.type === 'assistant/message')
      .map((event) => (event.data as { content: { text: string }[] }).content[0].text)
    expect(texts).to.deep.equal(['newer', 'original'])
  })

  it('rejects an adapter without stream()', async () => {
    const s = await scene()
    expect(() => s.root.models.register('broken', {} as ModelAdapter)).to.throw(TypeError, 'model adapter for "broken" must have a stream() method')
  })
})

describe('model routes of one provider registered twice', () => {
  it('never revives a removed adapter, whatever the removal order', async () => {
    const host = await createHost()
    const agent = await host.agent()
    const first = { async *stream() {} }
    const second = { async *stream() {} }
    const removeFirst = agent.ctx.models.register('x', first)
    const removeSecond = agent.ctx.models.register('x', second)
    removeFirst()
    expect(host.root.models.resolve('x', agent)).to.equal(second)
    removeSecond()
    expect(host.root.models.resolve('x', agent)).to.equal(undefined)
  })
})

describe('ScriptedModel: delayed entries', () => {
  let clock: sinon.SinonFakeTimers | undefined

  afterEach(() => {
    clock?.restore()
    clock = undefined
  })

  it('streams a delayed entry only once its delay has passed', async () => {
    const s = await scene()
    const { agent } = await s.create()
    clock = sinon.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    s.scripted.push({ text: 'late', delayMs: 50 })
    const parts: StreamPart[] = []
    const done = (async () => {
      for await (const part of adapterOf(s).stream(request(agent))) parts.push(part)
    })()
    await clock.tickAsync(49)
    expect(parts).to.deep.equal([])
    await clock.tickAsync(1)
    await done
    expect(parts).to.deep.equal([
      { type: 'text-delta', text: 'late' },
      { type: 'finish', reason: 'stop' },
    ])
    clock.restore()
    clock = undefined
  })

  it('fails a delayed entry with the signal reason when the request aborts during the delay', async () => {
    const s = await scene()
    const { agent } = await s.create()
    clock = sinon.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] })
    s.scripted.push({ text: 'never', delayMs: 1000 })
    const controller = new AbortController()
    const parts: StreamPart[] = []
    const done = (async () => {
      for await (const part of adapterOf(s).stream(request(agent, controller.signal))) parts.push(part)
    })()
    await clock.tickAsync(10)
    const reason = new Error('stop waiting')
    controller.abort(reason)
    expect(await rejectionOf(done)).to.equal(reason)
    expect(parts).to.deep.equal([])
    expect(clock.countTimers()).to.equal(0)
    clock.restore()
    clock = undefined
  })
})
