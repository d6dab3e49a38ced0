import { expect } from 'chai'
import type { Session, SessionEvent } from '../../lib/types.ts'
import { lastOf, nextEvent, rejectionOf, scene, typesOf } from '../support/scene.ts'

const badIntegers: [string, unknown][] = [
  ['-1', -1],
  ['1.5', 1.5],
  ['NaN', Number.NaN],
  ['-0', -0],
  ['2 ** 53', 2 ** 53],
  ["'1'", '1'],
]

describe('session headers (SPEC §1.2)', () => {
  for (const field of ['delegationDepth', 'seedLength'] as const) {
    for (const [label, value] of badIntegers) {
      it(`rejects ${field} ${label} where the header is built and leaves no trace`, async () => {
        const s = await scene()
        const created = s.create({ sessionId: 'bad', header: { [field]: value as number } })
        expect((await rejectionOf(created)).message).to.equal(`session header ${field} must be a non-negative safe integer`)
        expect(s.root.sessions.get('bad')).to.equal(undefined)
      })
    }

    it(`accepts ${field} 0 and 2 ** 53 - 1`, async () => {
      const s = await scene()
      const zero = await s.create({ header: { [field]: 0 } })
      const max = await s.create({ header: { [field]: Number.MAX_SAFE_INTEGER } })
      expect(zero.agent.session.header[field]).to.equal(0)
      expect(max.agent.session.header[field]).to.equal(Number.MAX_SAFE_INTEGER)
    })
  }

  for (const field of ['label', 'callId'] as const) {
    it(`rejects a non-string ${field} where the header is built and leaves no trace`, async () => {
      const s = await scene()
      const created = s.create({ sessionId: 'bad', header: { [field]: 7 as unknown as string } })
      expect((await rejectionOf(created)).message).to.equal(`session header ${field} must be a string`)
      expect(s.root.sessions.get('bad')).to.equal(undefined)
    })
  }

  it('keeps the header fields agent and approval given to create', async () => {
    const s = await scene()
    const approval = { default: 'ask' as const, rules: [{ tool: 'shell', decision: 'deny' as const }] }
    const { agent } = await s.create({ header: { agent: 'reviewer', approval } })
    expect(agent.session.header.agent).to.equal('reviewer')
    expect(agent.session.header.approval).to.deep.equal(approval)
    expect(Object.isFrozen(agent.session.header.approval)).to.equal(true)
  })

  it('rejects a malformed approval header given to create and leaves no trace', async () => {
    const s = await scene()
    const created = s.create({ sessionId: 'bad', header: { approval: { rules: [{ tool: 'x', decision: 'maybe' }] } as never } })
    expect((await rejectionOf(created)).message).to.equal('session header approval rules[0] decision must be "allow", "ask" or "deny", not "maybe"')
    expect(s.root.sessions.get('bad')).to.equal(undefined)
  })

  it('keeps the lineage fields label and callId', async () => {
    const s = await scene()
    const { agent } = await s.create({ header: { parentSession: 'parent', label: 'review', callId: 'call_7' } })
    expect(agent.session.header).to.include({ parentSession: 'parent', label: 'review', callId: 'call_7' })
  })

  it('keeps the given fields and freezes the header', async () => {
    const s = await scene()
    const { agent } = await s.create({
      sessionId: 'child',
      header: { cwd: '/work', parentSession: 'parent', origin: 'subagent', delegationDepth: 2 },
    })
    const { header } = agent.session
    expect(header).to.include({ id: 'child', cwd: '/work', parentSession: 'parent', origin: 'subagent', delegationDepth: 2 })
    expect(header.createdAt).to.be.a('number')
    expect(Object.isFrozen(header)).to.equal(true)
    expect(() => {
      ;(header as { delegationDepth?: number }).delegationDepth = 0
    }).to.throw(TypeError)
  })
})

describe('session events (SPEC §1.2)', () => {
  it('numbers every event with its index', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push({ toolCalls: [{ name: 'missing', arguments: '{}' }] }, { text: 'done' })
    agent.followup('hello')
    await agent.whenIdle()
    expect(agent.session.events.length).to.be.greaterThan(6)
    expect(agent.session.events.map((event) => event.seq)).to.deep.equal(agent.session.events.map((_event, index) => index))
  })

  it('returns the appended event, frozen down to its data', async () => {
    const s = await scene()
    const { agent } = await s.create()
    const event = agent.session.append('note', { nested: { list: [1, 2] } })
    expect(event).to.equal(agent.session.events.at(-1))
    expect(event).to.deep.equal({ seq: 0, type: 'note', data: { nested: { list: [1, 2] } } })
    const data = event.data as { nested: { list: number[] } }
    expect([Object.isFrozen(event), Object.isFrozen(data), Object.isFrozen(data.nested), Object.isFrozen(data.nested.list)]).to.deep.equal([
      true,
      true,
      true,
      true,
    ])
  })

  it('freezes appended data down to its leaves when its outer object comes frozen', async () => {
    const s = await scene()
    const { agent } = await s.create()
    const list = [1]
    agent.session.append('note', Object.freeze({ list }))
    expect(() => list.push(Number.NaN)).to.throw(TypeError)
    expect(agent.session.events[0].data).to.deep.equal({ list: [1] })
  })

  it('freezes the events the loop writes', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push({ text: 'hi' })
    agent.followup('hello')
    await agent.whenIdle()
    const message = agent.session.events.find((event) => event.type === 'assistant/message')!
    const data = message.data as { content: { text: string }[] }
    expect(Object.isFrozen(message)).to.equal(true)
    expect(Object.isFrozen(data.content[0])).to.equal(true)
  })

  it('freezes the tool/result events the loop writes, down to their content blocks', async () => {
    const s = await scene()
    s.root.tools.register({ name: 'shout', description: 'shouts', parameters: { type: 'object' }, execute: () => 'HI' })
    const { agent } = await s.create()
    s.scripted.push({ toolCalls: [{ id: 'c1', name: 'shout', arguments: '{}' }, { id: 'c2', name: 'missing', arguments: '{}' }] }, { text: 'done' })
    agent.followup('hello')
    await agent.whenIdle()
    const results = agent.session.events.filter((event) => event.type === 'tool/result')
    expect(results.map((event) => event.data)).to.deep.equal([
      { turn: 1, step: 1, callId: 'c1', name: 'shout', isError: false, content: [{ type: 'text', text: 'HI' }] },
      { turn: 1, step: 1, callId: 'c2', name: 'missing', isError: true, content: [{ type: 'text', text: 'Error: unknown tool "missing"' }] },
    ])
    const frozen = results.flatMap((event) => {
      const data = event.data as { content: object[] }
      return [event, data, data.content, ...data.content].map((part) => Object.isFrozen(part))
    })
    expect(frozen).to.deep.equal(new Array(8).fill(true))
  })

  /** An agent after one completed turn answering `hi`, with every `session/event` it emitted. */
  async function observedTurn() {
    const s = await scene()
    const { agent } = await s.create()
    const heard: SessionEvent[] = []
    s.on('session/event', (_session: Session, event: SessionEvent) => {
      heard.push(event)
    })
    s.scripted.push({ text: 'hi' })
    agent.followup('hello')
    await agent.whenIdle()
    return { agent, heard }
  }

  it('freezes turn/start and step/start and lets session/event observers hear them in order', async () => {
    const { agent, heard } = await observedTurn()
    const markers = agent.session.events.filter((event) => event.type === 'turn/start' || event.type === 'step/start')
    expect(markers.map(({ seq, type, data }) => ({ seq, type, data }))).to.deep.equal([
      { seq: 0, type: 'turn/start', data: { turn: 1, trigger: 'message' } },
      { seq: 2, type: 'step/start', data: { turn: 1, step: 1 } },
    ])
    expect(markers.flatMap((event) => [Object.isFrozen(event), Object.isFrozen(event.data)])).to.deep.equal([true, true, true, true])
    expect(heard).to.deep.equal(agent.session.events)
  })

  it('freezes the turn/end of a completed turn and lets session/event observers hear it last', async () => {
    const { agent, heard } = await observedTurn()
    const end = agent.session.events.at(-1)!
    expect({ seq: end.seq, type: end.type, data: end.data }).to.deep.equal({ seq: 5, type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } })
    const { reason } = end.data as { reason: object }
    expect([Object.isFrozen(end), Object.isFrozen(end.data), Object.isFrozen(reason)]).to.deep.equal([true, true, true])
    expect(heard.at(-1)).to.equal(end)
  })
})

describe('session/event (SPEC §1.2)', () => {
  it('is emitted after the append, with the event already in the log', async () => {
    const s = await scene()
    const { agent } = await s.create()
    const seen: { length: number; isLast: boolean }[] = []
    s.on('session/event', (session: Session, event: SessionEvent) => {
      seen.push({ length: session.events.length, isLast: session.events.at(-1) === event })
    })
    agent.session.append('note', {})
    expect(seen).to.deep.equal([{ length: 1, isLast: true }])
  })

  it('contains a throwing listener: the append succeeds, later listeners still hear it, the error is logged', async () => {
    const s = await scene()
    const { agent } = await s.create()
    const heard: string[] = []
    s.on('session/event', () => {
      throw new Error('listener exploded')
    })
    s.on('session/event', (_session: Session, event: SessionEvent) => {
      heard.push(event.type)
    })
    const event = agent.session.append('note', {})
    expect(agent.session.events).to.deep.equal([event])
    expect(heard).to.deep.equal(['note'])
    expect(s.logged().join('\n')).to.contain('listener exploded')
  })

  it('contains a rejecting listener and logs the rejection', async () => {
    const s = await scene()
    const { agent } = await s.create()
    let rejection!: Promise<void>
    s.on('session/event', () => {
      rejection = Promise.reject(new Error('async listener failed'))
      return rejection
    })
    agent.session.append('note', {})
    expect(agent.session.events).to.have.length(1)
    // the host attached its handler first, so it has run once ours has
    await rejection.catch(() => {})
    expect(s.logged().join('\n')).to.contain('async listener failed')
  })

  it('keeps a throwing listener from breaking a turn', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.on('session/event', () => {
      throw new Error('noisy observer')
    })
    s.scripted.push({ text: 'fine' })
    agent.followup('hello')
    await agent.whenIdle()
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'completed' } })
  })
})

describe('sessions.get / sessions.list (SPEC §1.2)', () => {
  it('finds a published session by its agent id until the agent is disposed', async () => {
    const s = await scene()
    const handle = await s.create({ sessionId: 'a' })
    expect(s.root.sessions.get('a')).to.equal(handle.agent.session)
    expect(s.root.sessions.list()).to.deep.equal([handle.agent.session])
    await handle.dispose()
    expect(s.root.sessions.get('a')).to.equal(undefined)
    expect(s.root.sessions.list()).to.deep.equal([])
  })
})

describe('seeded sessions (SPEC §1.2)', () => {
  function seedFrom(events: readonly SessionEvent[]): SessionEvent[] {
    return events.map((event) => ({ seq: event.seq, type: event.type, data: structuredClone(event.data) }))
  }

  it('starts with the seed and appends a session/end-seed marker', async () => {
    const s = await scene()
    const parent = await s.create()
    s.scripted.push({ text: 'parent answer' })
    parent.agent.followup('hello')
    await parent.agent.whenIdle()
    const seed = seedFrom(parent.agent.session.events)
    const child = await s.create({ seed })
    const events = child.agent.session.events
    expect(events.slice(0, seed.length)).to.deep.equal(seed)
    expect(events.slice(seed.length)).to.deep.equal([{ seq: seed.length, type: 'session/end-seed', data: {} }])
  })

  it('does not add a second marker when the seed already ends with one', async () => {
    const s = await scene()
    const seed = [
      { seq: 0, type: 'note', data: { n: 1 } },
      { seq: 1, type: 'session/end-seed', data: {} },
    ]
    const { agent } = await s.create({ seed })
    expect(agent.session.events.map((event) => event.type)).to.deep.equal(['note', 'session/end-seed'])
  })

  it('marks an empty seed too', async () => {
    const s = await scene()
    const { agent } = await s.create({ seed: [] })
    expect(agent.session.events).to.deep.equal([{ seq: 0, type: 'session/end-seed', data: {} }])
  })

  it('copies the seed data of a frozen event whose nested data is not frozen, so later edits do not leak in', async () => {
    const s = await scene()
    const list = [1]
    const seed = [Object.freeze({ seq: 0, type: 'note', data: Object.freeze({ list }) })]
    const { agent } = await s.create({ seed })
    list.push(Number.NaN)
    expect(agent.session.events[0].data).to.deep.equal({ list: [1] })
  })

  it('copies and freezes seed data, so later edits of the seed do not leak in', async () => {
    const s = await scene()
    const seed = [{ seq: 0, type: 'note', data: { list: [1] } }]
    const { agent } = await s.create({ seed })
    seed[0].data.list.push(2)
    expect(agent.session.events[0].data).to.deep.equal({ list: [1] })
    expect(Object.isFrozen(agent.session.events[0].data)).to.equal(true)
  })

  it('emits no session/event for the seed or the marker', async () => {
    const s = await scene()
    const heard: string[] = []
    s.on('session/event', (_session: Session, event: SessionEvent) => {
      heard.push(event.type)
    })
    await s.create({ seed: [{ seq: 0, type: 'note', data: {} }] })
    expect(heard).to.deep.equal([])
  })

  it('rejects a seed whose seq is not contiguous from 0, leaving no trace', async () => {
    const s = await scene()
    const seed = [
      { seq: 0, type: 'note', data: {} },
      { seq: 2, type: 'note', data: {} },
    ]
    expect((await rejectionOf(s.create({ sessionId: 'gap', seed }))).message).to.equal('session seed event 1 has seq 2, expected 1')
    expect(s.root.sessions.get('gap')).to.equal(undefined)
  })

  it('rejects a seed that starts at seq 1', async () => {
    const s = await scene()
    expect((await rejectionOf(s.create({ seed: [{ seq: 1, type: 'note', data: {} }] }))).message).to.equal('session seed event 0 has seq 1, expected 0')
  })

  it('rejects a seeded tool/result whose isError is not a boolean, naming its seq, type and field', async () => {
    const s = await scene()
    const seed = [
      { seq: 0, type: 'note', data: {} },
      { seq: 1, type: 'tool/result', data: { turn: 1, step: 1, callId: 'c1', name: 'echo', isError: 'no', content: [] } },
    ]
    const error = await rejectionOf(s.create({ sessionId: 'bad', seed }))
    expect(error.message).to.equal('session seed event 1 "tool/result" data.isError must be a boolean, got string')
    expect(error.code).to.equal('INVALID_SESSION')
    expect(s.root.sessions.get('bad')).to.equal(undefined)
  })

  it('rejects a frozen seeded user/message whose content block is malformed, though frozen events are shared', async () => {
    const s = await scene()
    const data = Object.freeze({ content: Object.freeze([Object.freeze({ type: 'text', text: 1 })]), source: Object.freeze({ kind: 'user' }) })
    const seed = [Object.freeze({ seq: 0, type: 'user/message', data })] as unknown as SessionEvent[]
    expect((await rejectionOf(s.create({ seed }))).message).to.equal('session seed event 0 "user/message" data.content[0] text must be a string, got number')
  })

  it('shares with a fork the events the loop wrote, a cancelled turn and a failed one included', async () => {
    const s = await scene()
    const parent = await s.create()
    s.scripted.push('hang')
    const streaming = nextEvent(s.root, parent.agent, 'assistant/delta')
    parent.agent.followup('first')
    await streaming
    parent.agent.cancel({ kind: 'hook', reason: 'stop' })
    await parent.agent.whenIdle()
    s.scripted.push(new Error('upstream 503'))
    parent.agent.followup('second')
    await parent.agent.whenIdle()
    const seed = parent.agent.session.events
    const child = await s.create({ seed })
    expect(child.agent.session.events.slice(0, seed.length).every((event, i) => event === seed[i])).to.equal(true)
  })

  for (const [label, data] of [
    ['a function', { fn: () => 1 }],
    ['undefined', undefined],
    ['NaN', { n: Number.NaN }],
    ['a class instance', { when: new Date(0) }],
  ] as const) {
    it(`rejects seed data holding ${label}`, async () => {
      const s = await scene()
      const seed = [{ seq: 0, type: 'note', data }] as unknown as SessionEvent[]
      expect((await rejectionOf(s.create({ seed }))).message).to.equal('session seed event 0 data must be JSON data')
    })
  }
})

describe('session.append validation', () => {
  function nested(levels: number): unknown {
    let value: unknown = 1
    for (let i = 0; i < levels; i++) value = { next: value }
    return value
  }

  const cases: [string, unknown, string][] = [
    ['undefined data', undefined, 'session event "note/bad" data must be JSON data: data is undefined'],
    ['a Date', { when: new Date(0) }, 'session event "note/bad" data must be JSON data: data.when is a Date object'],
    ['a Map', { index: new Map() }, 'session event "note/bad" data must be JSON data: data.index is a Map object'],
    ['a function', [1, () => 2], 'session event "note/bad" data must be JSON data: data[1] is a function'],
    ['NaN', { n: Number.NaN }, 'session event "note/bad" data must be JSON data: data.n is NaN'],
    ['data nested 257 levels deep', nested(257), 'session event "note/bad" data must be JSON data nested at most 256 levels deep'],
  ]
  for (const [label, data, message] of cases) {
    it(`rejects ${label} at the call, appending and emitting nothing`, async () => {
      const s = await scene()
      const { agent } = await s.create()
      const heard: string[] = []
      s.on('session/event', (_session, event) => void heard.push(event.type))
      const before = agent.session.events.length
      expect(() => agent.session.append('note/bad', data)).to.throw(message).with.property('code', 'INVALID_SESSION')
      expect(agent.session.events).to.have.length(before)
      expect(heard).to.deep.equal([])
    })
  }

  it('rejects an empty event type', async () => {
    const s = await scene()
    const { agent } = await s.create()
    expect(() => agent.session.append('', {})).to.throw('session event type must be a non-empty string')
    expect(agent.session.events).to.have.length(0)
  })

  it('accepts data nested exactly 256 levels deep', async () => {
    const s = await scene()
    const { agent } = await s.create()
    agent.session.append('note/deep', nested(256))
    expect(agent.session.events).to.have.length(1)
  })

  it('leaves the caller data unfrozen when it rejects it', async () => {
    const s = await scene()
    const { agent } = await s.create()
    const data = { ok: { a: 1 }, bad: new Map() }
    expect(() => agent.session.append('note/bad', data)).to.throw('data.bad is a Map object')
    expect(Object.isFrozen(data)).to.equal(false)
    expect(Object.isFrozen(data.ok)).to.equal(false)
  })

  for (const [type, data, message] of [
    ['assistant/message', { turn: 1, step: 1, content: 'ok' }, 'session event "assistant/message" data.content must be an array, got string'],
    ['turn/end', { turn: 1, reason: 'completed' }, 'session event "turn/end" data.reason must be an object, got string'],
    ['user/message', { content: [{ type: 'text', text: 7 }] }, 'session event "user/message" data.content[0] text must be a string, got number'],
  ] as const) {
    it(`rejects a ${type} whose data has the wrong shape, as a stored session or seed with it would be`, async () => {
      const s = await scene()
      const { agent } = await s.create()
      expect(() => agent.session.append(type, data as never)).to.throw(message).with.property('code', 'INVALID_SESSION')
      expect(agent.session.events).to.have.length(0)
      // what append accepts, a seed accepts: the log stays one that can be resumed or forked
      agent.session.append('note/ok', { n: 1 })
      const child = await s.create({ seed: agent.session.events })
      expect(typesOf(child.agent)).to.deep.equal(['note/ok', 'session/end-seed'])
    })
  }

  it('keeps every later seed of the session valid after a rejected append', async () => {
    const s = await scene()
    const parent = await s.create()
    parent.agent.session.append('note/ok', { n: 1 })
    expect(() => parent.agent.session.append('note/bad', { when: new Date(0) })).to.throw()
    const child = await s.create({ seed: parent.agent.session.events })
    expect(typesOf(child.agent)).to.deep.equal(['note/ok', 'session/end-seed'])
  })
})
