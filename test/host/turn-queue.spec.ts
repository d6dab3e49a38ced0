import { expect } from 'chai'
import { lastOf, nextEvent, scene, typesOf } from '../support/scene.ts'

describe('Agent.followup (SPEC §1.3)', () => {
  it('starts a turn synchronously: running on return, turn/start and user/message already appended', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push({ text: 'ok' })
    agent.followup('hello')
    expect(agent.status).to.equal('running')
    expect(agent.session.events.slice(0, 2).map(({ type, data }) => ({ type, data }))).to.deep.equal([
      { type: 'turn/start', data: { turn: 1, trigger: 'message' } },
      { type: 'user/message', data: { content: [{ type: 'text', text: 'hello' }], source: { kind: 'user' } } },
    ])
    await agent.whenIdle()
    expect(agent.status).to.equal('idle')
  })

  it('takes content blocks as they are and records a plugin source', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push({ text: 'ok' })
    const content = [
      { type: 'text' as const, text: 'look' },
      { type: 'text' as const, text: 'twice' },
    ]
    agent.followup(content, 'plugin')
    expect(lastOf(agent, 'user/message')).to.deep.equal({ content, source: { kind: 'plugin' } })
    await agent.whenIdle()
  })

  it('queues input that arrives during a turn and runs one turn per message, in order', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push({ text: 'one' }, { text: 'two' }, { text: 'three' })
    agent.followup('first')
    agent.followup('second')
    agent.followup('third')
    expect(typesOf(agent).filter((type) => type === 'user/message')).to.have.length(1)
    await agent.whenIdle()
    const turns = agent.session.events.filter((event) => event.type === 'turn/start').map((event) => event.data)
    const messages = agent.session.events
      .filter((event) => event.type === 'user/message')
      .map((event) => (event.data as { content: { text: string }[] }).content[0].text)
    expect(turns).to.deep.equal([
      { turn: 1, trigger: 'message' },
      { turn: 2, trigger: 'message' },
      { turn: 3, trigger: 'message' },
    ])
    expect(messages).to.deep.equal(['first', 'second', 'third'])
    expect(s.scripted.requests).to.have.length(3)
  })

  it('records the block text it checked when a getter answers differently on every read', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push({ text: 'ok' })
    let reads = 0
    // a string to the first read, then a function (not JSON) to every later one
    const block = Object.defineProperty({ type: 'text' }, 'text', { enumerable: true, get: () => (reads++ ? () => 'changed' : 'hello') })
    agent.followup([block as { type: 'text'; text: string }])
    await agent.whenIdle()
    expect(lastOf(agent, 'user/message')).to.deep.equal({ content: [{ type: 'text', text: 'hello' }], source: { kind: 'user' } })
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'completed' } })
    expect(reads).to.equal(1)
  })

  it('rejects content that is neither a string nor blocks, leaving the agent idle', async () => {
    const s = await scene()
    const { agent } = await s.create()
    expect(() => agent.followup(42 as never)).to.throw(TypeError, 'message content must be a string or an array of content blocks')
    expect(agent.status).to.equal('idle')
    expect(agent.session.events).to.deep.equal([])
  })

  it('rejects a source that is neither "user" nor "plugin", leaving the agent idle', async () => {
    const s = await scene()
    const { agent } = await s.create()
    expect(() => agent.followup('hello', 'constructor' as never)).to.throw(TypeError, 'message source must be "user" or "plugin"')
    expect(agent.status).to.equal('idle')
    expect(agent.session.events).to.deep.equal([])
  })

  it('rejects a bad source for a message queued behind a running turn, queueing nothing', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push({ text: 'one' })
    agent.followup('first')
    expect(() => agent.followup('second', 'system' as never)).to.throw(TypeError, 'message source must be "user" or "plugin"')
    await agent.whenIdle()
    expect(agent.session.events.filter((event) => event.type === 'user/message')).to.have.length(1)
    expect(agent.status).to.equal('idle')
  })
})

describe('Agent.whenIdle (SPEC §1.3)', () => {
  it('resolves at once on an idle agent', async () => {
    const s = await scene()
    const { agent } = await s.create()
    await agent.whenIdle()
    expect(agent.session.events).to.deep.equal([])
  })

  it('resolves only once the queued turns have run too', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push({ text: 'one' }, { text: 'two' })
    agent.followup('first')
    const idle = agent.whenIdle()
    agent.followup('second')
    await idle
    expect(agent.session.events.filter((event) => event.type === 'turn/end')).to.have.length(2)
    expect(agent.status).to.equal('idle')
  })

  it('gives concurrent waiters the same settlement', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push({ text: 'one' })
    agent.followup('first')
    const resolved: string[] = []
    await Promise.all([agent.whenIdle().then(() => resolved.push('a')), agent.whenIdle().then(() => resolved.push('b'))])
    expect(resolved).to.deep.equal(['a', 'b'])
  })
})

describe('Agent.cancel (SPEC §1.3)', () => {
  it('does nothing on an idle agent', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push({ text: 'ok' })
    await agent.whenIdle()
    agent.cancel({ kind: 'user' })
    expect(agent.status).to.equal('idle')
    expect(agent.session.events).to.deep.equal([])
    agent.followup('still works')
    await agent.whenIdle()
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'completed' } })
  })

  it('clears queued input and aborts the running turn', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push('hang', { text: 'never asked' })
    const streaming = nextEvent(s.root, agent, 'assistant/delta')
    agent.followup('first')
    agent.followup('queued')
    await streaming
    agent.cancel({ kind: 'user' })
    await agent.whenIdle()
    expect(agent.session.events.filter((event) => event.type === 'turn/start')).to.have.length(1)
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'aborted', cause: { kind: 'user' } } })
    expect(s.scripted.pending).to.equal(1)
  })

  it('keeps the first cause when cancelled twice', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push('hang')
    const streaming = nextEvent(s.root, agent, 'assistant/delta')
    agent.followup('first')
    await streaming
    agent.cancel({ kind: 'parent' })
    agent.cancel({ kind: 'user' })
    await agent.whenIdle()
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'aborted', cause: { kind: 'parent' } } })
  })

  it('lets the agent take new input after the cancelled turn', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push('hang', { text: 'back' })
    const streaming = nextEvent(s.root, agent, 'assistant/delta')
    agent.followup('first')
    await streaming
    agent.cancel({ kind: 'user' })
    await agent.whenIdle()
    agent.followup('again')
    await agent.whenIdle()
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 2, reason: { kind: 'completed' } })
  })

  it('records nothing the model streams after a cancel right after followup', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push({ text: 'not streamed' })
    agent.followup('hello')
    agent.cancel({ kind: 'user' })
    await agent.whenIdle()
    expect(agent.session.events.slice(2).map(({ type, data }) => ({ type, data }))).to.deep.equal([
      { type: 'step/start', data: { turn: 1, step: 1 } },
      { type: 'assistant/message', data: { turn: 1, step: 1, content: [], interrupted: true } },
      { type: 'turn/end', data: { turn: 1, reason: { kind: 'aborted', cause: { kind: 'user' } } } },
    ])
  })
})
