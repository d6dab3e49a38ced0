import { expect } from 'chai'
import type { StoredSession } from '../../plugins/host/index.ts'
import { rejectionOf, scene } from '../support/scene.ts'

const stored: StoredSession = {
  header: { id: 'kept', createdAt: 1700000000000 },
  events: [
    { seq: 0, type: 'turn/start', data: { turn: 1, trigger: 'message' } },
    { seq: 1, type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } },
  ],
}

const options = { agentOptions: { provider: 'scripted', model: 'test' } }

describe('agents.resume asks every session store in turn', () => {
  it('asks a second store when the first one answers asynchronously that it does not hold the session', async () => {
    const s = await scene()
    const asked: string[] = []
    s.on('session/load', async (id) => void asked.push(`first ${id}`))
    s.on('session/load', async (id) => {
      asked.push(`second ${id}`)
      return stored
    })
    const handle = await s.root.agents.resume('kept', options)
    expect(asked).to.deep.equal(['first kept', 'second kept'])
    expect(handle.agent.session.events).to.deep.equal(stored.events)
    await handle.dispose()
  })

  it('does not ask a later store once one holds the session', async () => {
    const s = await scene()
    const asked: string[] = []
    s.on('session/load', async () => {
      asked.push('first')
      return stored
    })
    s.on('session/load', () => void asked.push('second'))
    const handle = await s.root.agents.resume('kept', options)
    expect(asked).to.deep.equal(['first'])
    await handle.dispose()
  })

  it('passes over a store that rejects when a later one holds the session', async () => {
    const s = await scene()
    s.on('session/load', async () => {
      throw new Error('first store is offline')
    })
    s.on('session/load', () => stored)
    const handle = await s.root.agents.resume('kept', options)
    expect(handle.agent.id).to.equal('kept')
    await handle.dispose()
  })

  it('rejects with the first store error when no store holds the session, leaving no trace', async () => {
    const s = await scene()
    s.on('session/load', async () => {
      throw new Error('first store is offline')
    })
    s.on('session/load', () => {
      throw new Error('second store is offline')
    })
    s.on('session/load', async () => undefined)
    expect((await rejectionOf(s.root.agents.resume('kept', options))).message).to.equal('first store is offline')
  })

  it('rejects with "no session store holds session" when every store answers undefined', async () => {
    const s = await scene()
    s.on('session/load', async () => undefined)
    s.on('session/load', () => undefined)
    const error = await rejectionOf(s.root.agents.resume('kept', options))
    expect(error.message).to.equal('no session store holds session "kept"')
    expect(error.code).to.equal('INVALID_SESSION')
  })

  it('rejects a store answer that holds another session', async () => {
    const s = await scene()
    s.on('session/load', () => ({ ...stored, header: { id: 'other', createdAt: 1 } }))
    const error = await rejectionOf(s.root.agents.resume('kept', options))
    expect(error.message).to.equal('a session store answered session "kept" with session "other"')
    expect(s.root.agents.get('other')).to.equal(undefined)
  })

  it('leaves no agent, session or registration behind when the resumed agent fails its setup', async () => {
    const s = await scene()
    s.on('session/load', () => stored)
    const resumed = s.root.agents.resume('kept', {
      ...options,
      setup(agent) {
        agent.ctx.tools.register({ name: 'scoped', description: 'x', parameters: { type: 'object' }, execute: () => 'x' })
        throw new Error('setup failed')
      },
    })
    expect((await rejectionOf(resumed)).message).to.equal('setup failed')
    expect(s.root.agents.get('kept')).to.equal(undefined)
    expect(s.root.sessions.get('kept')).to.equal(undefined)
    expect(s.root.tools.get('scoped')).to.equal(undefined)
  })

  it('rejects a stored assistant/message without content, naming its seq, type and field, and leaves no trace', async () => {
    const s = await scene()
    s.on('session/load', () => ({
      header: { id: 'kept', createdAt: 1 },
      events: [{ seq: 0, type: 'assistant/message', data: { turn: 1, step: 1 } }],
    }))
    const error = await rejectionOf(s.root.agents.resume('kept', options))
    expect(error.message).to.equal('session seed event 0 "assistant/message" data.content must be an array, got undefined')
    expect(error.code).to.equal('INVALID_SESSION')
    expect(s.root.agents.get('kept')).to.equal(undefined)
    expect(s.root.sessions.get('kept')).to.equal(undefined)
  })

  it('rejects a stored turn/end whose reason kind is not a string, naming its seq', async () => {
    const s = await scene()
    s.on('session/load', () => ({
      ...stored,
      events: [stored.events[0]!, { seq: 1, type: 'turn/end', data: { turn: 1, reason: { kind: 7 } } }],
    }))
    const error = await rejectionOf(s.root.agents.resume('kept', options))
    expect(error.message).to.equal('session seed event 1 "turn/end" data.reason.kind must be a string, got number')
  })

  it('resumes a stored turn/end with a reason kind of its own, as session.append wrote it', async () => {
    const s = await scene()
    s.on('session/load', () => ({
      ...stored,
      events: [stored.events[0]!, { seq: 1, type: 'turn/end', data: { turn: 1, reason: { kind: 'custom' } } }],
    }))
    const handle = await s.root.agents.resume('kept', options)
    expect(handle.agent.session.events.at(-1)?.data).to.deep.equal({ turn: 1, reason: { kind: 'custom' } })
    await handle.dispose()
  })

  it('resumes a stored session holding an event of a type of its own, whatever its data', async () => {
    const s = await scene()
    s.on('session/load', () => ({ ...stored, events: [...stored.events, { seq: 2, type: 'plugin/note', data: [1, 'two'] }] }))
    const handle = await s.root.agents.resume('kept', options)
    expect(handle.agent.session.events.map((event) => event.type)).to.deep.equal(['turn/start', 'turn/end', 'plugin/note'])
    await handle.dispose()
  })

  it('runs a later turn of a resumed agent whose stored events all have their shapes', async () => {
    const s = await scene()
    s.on('session/load', () => ({
      header: { id: 'kept', createdAt: 1 },
      events: [
        { seq: 0, type: 'turn/start', data: { turn: 1, trigger: 'message' } },
        { seq: 1, type: 'user/message', data: { content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } } },
        { seq: 2, type: 'step/start', data: { turn: 1, step: 1 } },
        { seq: 3, type: 'assistant/delta', data: { turn: 1, step: 1, text: 'hello' } },
        {
          seq: 4,
          type: 'assistant/message',
          data: { turn: 1, step: 1, content: [{ type: 'text', text: 'hello' }], usage: { inputTokens: 3, outputTokens: 1 } },
        },
        { seq: 5, type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } },
      ],
    }))
    const { agent, dispose } = await s.root.agents.resume('kept', options)
    s.scripted.push({ text: 'again' })
    agent.followup('more')
    await agent.whenIdle()
    expect(s.scripted.requests[0]!.messages.map((message) => message.role)).to.deep.equal(['user', 'assistant', 'user'])
    await dispose()
  })
})
