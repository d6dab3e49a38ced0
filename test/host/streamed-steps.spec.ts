import { expect } from 'chai'
import sinon from 'sinon'
import { isCompactDelta, plainDeltasPerStep, StreamedStep } from '../../lib/session/streamed-steps.ts'
import { textChunkLength } from '../../lib/session/text-pieces.ts'
import type { Agent, ModelRequest, SessionEvent, StreamPart } from '../../lib/types.ts'
import { lastOf, runTurn, type Scene, scene } from '../support/scene.ts'

const long = plainDeltasPerStep + 40

/** `n` distinct pieces of text, as a model streams them. */
function piecesOf(n: number, tag = 't'): string[] {
  return Array.from({ length: n }, (_, i) => ` ${tag}${i}`)
}

function deltasOf(agent: Agent): SessionEvent[] {
  return agent.session.events.filter((event) => event.type === 'assistant/delta')
}

/** Every event appended to `agent`'s session from now on, as JSON text at the moment it was heard. */
function recordLive(s: Scene, agent: Agent): string[] {
  const heard: string[] = []
  s.on('session/event', (session, event) => {
    if (session.id === agent.id) heard.push(JSON.stringify(event))
  })
  return heard
}


/** A model route that streams `pieces`, then waits for the request's abort (or throws `fault`). */
function streamThenStop(s: Scene, pieces: readonly string[], end: 'hang' | Error): () => void {
  return s.root.models.register('stream-then-stop', {
    async *stream(request: ModelRequest): AsyncIterable<StreamPart> {
      for (const text of pieces) yield { type: 'text-delta', text }
      if (end !== 'hang') throw end
      await new Promise((_, reject) => request.signal.addEventListener('abort', () => reject(request.signal.reason)))
    },
  })
}

describe('streamed steps in the session log (SPEC §1.2 and §1.4)', () => {
  it('keeps every event of a long stream at its seq, as observers heard it live', async () => {
    const s = await scene()
    const { agent } = await s.create()
    const heard = recordLive(s, agent)
    s.scripted.push({ deltas: piecesOf(long) })
    await runTurn(agent)
    const { events } = agent.session
    expect(events.map((event) => event.seq)).to.deep.equal(events.map((_, i) => i))
    expect(events.map((event) => JSON.stringify(event))).to.deep.equal(heard)
    expect(events.every((event) => Object.isFrozen(event) && Object.isFrozen(event.data))).to.equal(true)
    expect(lastOf(agent, 'assistant/message')).to.deep.equal({ turn: 1, step: 1, content: [{ type: 'text', text: piecesOf(long).join('') }] })
  })

  it('stores a long step past its first deltas compactly and leaves a short step plain', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push({ deltas: piecesOf(long) }, { deltas: piecesOf(plainDeltasPerStep) })
    await runTurn(agent)
    await runTurn(agent)
    const [first, second] = [deltasOf(agent).slice(0, long), deltasOf(agent).slice(long)]
    expect(first.map(isCompactDelta)).to.deep.equal(first.map((_, i) => i >= plainDeltasPerStep))
    expect(second.some(isCompactDelta)).to.equal(false)
    expect(second.map((event) => event.data)).to.deep.equal(piecesOf(plainDeltasPerStep).map((text) => ({ turn: 2, step: 1, text })))
  })

  it('hands an observer the same event object the log keeps', async () => {
    const s = await scene()
    const { agent } = await s.create()
    const heard: SessionEvent[] = []
    s.on('session/event', (session, event) => {
      if (session.id === agent.id && event.type === 'assistant/delta') heard.push(event)
    })
    s.scripted.push({ deltas: piecesOf(long) })
    await runTurn(agent)
    expect(deltasOf(agent).every((event, i) => event === heard[i])).to.equal(true)
  })

  it('keeps the step right when a plugin appends an event between two deltas', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.on('session/event', (session, event) => {
      if (session.id === agent.id && event.seq === plainDeltasPerStep + 10) session.append('note/seen', { seq: event.seq })
    })
    s.scripted.push({ deltas: piecesOf(long) })
    await runTurn(agent)
    const { events } = agent.session
    expect(events.map((event) => event.seq)).to.deep.equal(events.map((_, i) => i))
    expect(deltasOf(agent).map((event) => event.data)).to.deep.equal(piecesOf(long).map((text) => ({ turn: 1, step: 1, text })))
  })

  it('reads every delta of a step longer than one chunk of pieces, live and from its message', async () => {
    const s = await scene()
    const { agent } = await s.create()
    const heard = recordLive(s, agent)
    const pieces = piecesOf(textChunkLength + plainDeltasPerStep + 8)
    s.scripted.push({ deltas: pieces })
    await runTurn(agent)
    const expected = pieces.map((text) => ({ turn: 1, step: 1, text }))
    const live = heard.map((json) => JSON.parse(json) as SessionEvent).filter((event) => event.type === 'assistant/delta')
    expect(live.map((event) => event.data)).to.deep.equal(expected)
    expect(deltasOf(agent).map((event) => event.data)).to.deep.equal(expected)
    expect(lastOf(agent, 'assistant/message')).to.deep.equal({ turn: 1, step: 1, content: [{ type: 'text', text: pieces.join('') }] })
  })

  it('keeps every delta of a step longer than one chunk readable when it failed before its message', async () => {
    const s = await scene()
    const pieces = piecesOf(textChunkLength + plainDeltasPerStep + 8)
    const unregister = streamThenStop(s, pieces, new Error('upstream reset'))
    const { agent } = await s.create({ agentOptions: { provider: 'stream-then-stop', model: 'm' } })
    await runTurn(agent)
    expect(deltasOf(agent).map((event) => event.data)).to.deep.equal(pieces.map((text) => ({ turn: 1, step: 1, text })))
    unregister()
  })

  it('reads the deltas of a long interrupted step from its interrupted message', async () => {
    const s = await scene()
    const unregister = streamThenStop(s, piecesOf(long), 'hang')
    const { agent } = await s.create({ agentOptions: { provider: 'stream-then-stop', model: 'm' } })
    const last = new Promise<void>((resolve) => {
      s.on('session/event', (session, event) => {
        if (session.id === agent.id && event.seq === long + 2) resolve()
      })
    })
    agent.followup('go')
    await last
    agent.cancel({ kind: 'user' })
    await agent.whenIdle()
    expect(lastOf(agent, 'assistant/message')).to.deep.equal({
      turn: 1,
      step: 1,
      content: [{ type: 'text', text: piecesOf(long).join('') }],
      interrupted: true,
    })
    expect(deltasOf(agent).map((event) => event.data)).to.deep.equal(piecesOf(long).map((text) => ({ turn: 1, step: 1, text })))
    unregister()
  })

  it('keeps the deltas of a long step that failed before its message readable', async () => {
    const s = await scene()
    const unregister = streamThenStop(s, piecesOf(long), new Error('upstream reset'))
    const { agent } = await s.create({ agentOptions: { provider: 'stream-then-stop', model: 'm' } })
    await runTurn(agent)
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'error', error: { message: 'upstream reset' } } })
    expect(deltasOf(agent).map((event) => event.data)).to.deep.equal(piecesOf(long).map((text) => ({ turn: 1, step: 1, text })))
    unregister()
  })

  it('keeps a long failed step\'s text as one joined string, not as its pieces', async () => {
    const settle = sinon.spy(StreamedStep.prototype, 'settle')
    try {
      const s = await scene()
      const unregister = streamThenStop(s, piecesOf(long), new Error('upstream reset'))
      const { agent } = await s.create({ agentOptions: { provider: 'stream-then-stop', model: 'm' } })
      await runTurn(agent)
      expect(settle.args).to.deep.equal([[piecesOf(long).join('')]])
      expect(deltasOf(agent).map((event) => event.data)).to.deep.equal(piecesOf(long).map((text) => ({ turn: 1, step: 1, text })))
      unregister()
    } finally {
      settle.restore()
    }
  })

  it('shares the compact events with a session seeded from them', async () => {
    const s = await scene()
    const { agent: parent } = await s.create()
    s.scripted.push({ deltas: piecesOf(long) })
    await runTurn(parent)
    const { agent: child } = await s.create({ seed: parent.session.events })
    const seeded = child.session.events.slice(0, parent.session.events.length)
    expect(seeded.every((event, i) => event === parent.session.events[i])).to.equal(true)
    expect(JSON.stringify(seeded)).to.equal(JSON.stringify(parent.session.events))
  })

  it('starts the next step after a long one with plain deltas of its own step', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.root.tools.register({
      name: 'noop',
      description: 'Does nothing.',
      parameters: { type: 'object', properties: {} },
      execute: () => 'done',
    })
    s.scripted.push({ deltas: piecesOf(long), toolCalls: [{ name: 'noop', arguments: '{}' }] }, { text: 'after' })
    await runTurn(agent)
    expect(deltasOf(agent).at(-1)?.data).to.deep.equal({ turn: 1, step: 2, text: 'after' })
    expect(deltasOf(agent).slice(0, long).map((event) => event.data)).to.deep.equal(
      piecesOf(long).map((text) => ({ turn: 1, step: 1, text })),
    )
  })
})
