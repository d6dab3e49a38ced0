import { expect } from 'chai'
import { isCompactDelta, plainDeltasPerStep } from '../../lib/session/streamed-steps.ts'
import type { ModelRequest, Session, SessionEvent, SessionHeader, StreamPart } from '../../lib/types.ts'
import {
  encodeEvent,
  encodeHeader,
  encodeRun,
  encodeStreamedMessage,
  holdsEarlierState,
  parseSessionFile,
} from '../../plugins/session-files/file-format.ts'
import type { SessionFileSystem } from '../../plugins/session-files/file-system.ts'
import { OpenFileGate } from '../../plugins/session-files/open-file-gate.ts'
import { maxRunDeltas, SessionWriter } from '../../plugins/session-files/session-writer.ts'
import { scene } from '../support/scene.ts'
import { createFilesHost, type FilesHost, scriptedOptions } from './fixture.ts'

const header: SessionHeader = Object.freeze({ id: 's1', createdAt: 5 })

function delta(seq: number, text: string, step = 1): SessionEvent {
  return { seq, type: 'assistant/delta', data: { turn: 1, step, text } }
}

/** `n` distinct pieces of text, as a model streams them. */
function piecesOf(n: number): string[] {
  return Array.from({ length: n }, (_, i) => ` t${i}`)
}

describe('session file run lines (format version 2)', () => {
  it('reads a run line as one delta event per text, with consecutive seqs', () => {
    const text = encodeHeader(header) + encodeEvent({ seq: 0, type: 'step/start', data: { turn: 1, step: 1 } }) + encodeRun(1, 1, 1, ['a', 'b', 'c'])
    expect(parseSessionFile('s1', text).events).to.deep.equal([
      { seq: 0, type: 'step/start', data: { turn: 1, step: 1 } },
      delta(1, 'a'),
      delta(2, 'b'),
      delta(3, 'c'),
    ])
  })

  it('writes a run line as {"seq","deltas":{"turn","step","texts"}}', () => {
    expect(encodeRun(4, 2, 3, ['x', 'y'])).to.equal('{"seq":4,"deltas":{"turn":2,"step":3,"texts":["x","y"]}}\n')
  })

  it('drops a torn run line and keeps the events before it', () => {
    const text = `${encodeHeader(header)}${encodeEvent(delta(0, 'a'))}{"seq":1,"deltas":{"turn":1,"step":1,"texts":["b","c`
    expect(parseSessionFile('s1', text)).to.deep.equal({ header, events: [delta(0, 'a')], isTorn: true, isDisposed: false })
  })

  const broken: [string, string, string][] = [
    ['a run with no texts', '{"seq":0,"deltas":{"turn":1,"step":1,"texts":[]}}', 'session file "s1" line 2 is not a valid session event'],
    ['a run with an empty text', '{"seq":0,"deltas":{"turn":1,"step":1,"texts":["a",""]}}', 'session file "s1" line 2 is not a valid session event'],
    ['a run with a string step', '{"seq":0,"deltas":{"turn":1,"step":"1","texts":["a"]}}', 'session file "s1" line 2 is not a valid session event'],
    ['a run with an extra field', '{"seq":0,"type":"assistant/delta","deltas":{"turn":1,"step":1,"texts":["a"]}}', 'session file "s1" line 2 is not a valid session event'],
    ['a run at the wrong seq', '{"seq":1,"deltas":{"turn":1,"step":1,"texts":["a"]}}', 'session file "s1" line 2 has seq 1, expected 0'],
  ]
  for (const [what, line, message] of broken) {
    it(`rejects ${what}`, () => {
      expect(() => parseSessionFile('s1', `${encodeHeader(header)}${line}\n`)).to.throw(message)
    })
  }

  it('reads a streamed message line back with the text of its step\'s deltas', () => {
    const message = { seq: 3, type: 'assistant/message', data: { turn: 1, step: 1, content: [{ type: 'text', text: 'abc' }, { type: 'tool-call', id: 'c1', name: 'noop', arguments: '{}' }], usage: { inputTokens: 1, outputTokens: 2 } } }
    const line = encodeStreamedMessage(message, { turn: 1, step: 1, texts: ['a', 'b', 'c'] })
    expect(line).to.equal(
      '{"seq":3,"type":"assistant/message","data":{"turn":1,"step":1,"content":[{"type":"text"},{"type":"tool-call","id":"c1","name":"noop","arguments":"{}"}],"usage":{"inputTokens":1,"outputTokens":2}},"streamed":true}\n',
    )
    const text = encodeHeader(header) + encodeRun(0, 1, 1, ['a', 'b']) + encodeEvent(delta(2, 'c')) + line
    expect(parseSessionFile('s1', text).events).to.deep.equal([delta(0, 'a'), delta(1, 'b'), delta(2, 'c'), message])
  })

  const notStreamed: [string, SessionEvent][] = [
    ['another text', { seq: 2, type: 'assistant/message', data: { turn: 1, step: 1, content: [{ type: 'text', text: 'abX' }] } }],
    ['another step', { seq: 2, type: 'assistant/message', data: { turn: 1, step: 2, content: [{ type: 'text', text: 'ab' }] } }],
    ['no leading text block', { seq: 2, type: 'assistant/message', data: { turn: 1, step: 1, content: [] } }],
    ['an extra key in the text block', { seq: 2, type: 'assistant/message', data: { turn: 1, step: 1, content: [{ type: 'text', text: 'ab', note: 1 }] } }],
  ]
  for (const [what, message] of notStreamed) {
    it(`keeps the text in the line of a message with ${what}`, () => {
      expect(encodeStreamedMessage(message, { turn: 1, step: 1, texts: ['a', 'b'] })).to.equal(undefined)
    })
  }

  const badStreamed: [string, string][] = [
    ['no delta before it', '{"seq":0,"type":"assistant/message","data":{"turn":1,"step":1,"content":[{"type":"text"}]},"streamed":true}'],
    ['another step than its deltas', `${encodeRun(0, 1, 1, ['a', 'b']).trim()}\n{"seq":2,"type":"assistant/message","data":{"turn":1,"step":2,"content":[{"type":"text"}]},"streamed":true}`],
    ['a text left in', `${encodeRun(0, 1, 1, ['a', 'b']).trim()}\n{"seq":2,"type":"assistant/message","data":{"turn":1,"step":1,"content":[{"type":"text","text":"ab"}]},"streamed":true}`],
    ['streamed other than true', `${encodeRun(0, 1, 1, ['a', 'b']).trim()}\n{"seq":2,"type":"assistant/message","data":{"turn":1,"step":1,"content":[{"type":"text"}]},"streamed":1}`],
  ]
  for (const [what, lines] of badStreamed) {
    it(`rejects a streamed message line with ${what}`, () => {
      const count = lines.split('\n').length
      expect(() => parseSessionFile('s1', `${encodeHeader(header)}${lines}\n`)).to.throw(`session file "s1" line ${count + 1} is not a valid session event`)
    })
  }

  it('takes no run line in a version 1 file', () => {
    const text = `{"version":1,"header":{"id":"s1","createdAt":5}}\n${encodeRun(0, 1, 1, ['a', 'b'])}`
    expect(() => parseSessionFile('s1', text)).to.throw('session file "s1" line 2 is not a valid session event')
  })

  it('recognises its own file in a live session whose deltas are compact', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push({ deltas: piecesOf(plainDeltasPerStep + 8) })
    agent.followup('go')
    await agent.whenIdle()
    const { events } = agent.session
    const text = encodeHeader(agent.session.header) + events.map((event) => encodeEvent(event)).join('')
    expect(holdsEarlierState(text, encodeHeader(agent.session.header), events)).to.equal(true)
    expect(holdsEarlierState(text.replace(' t35', ' t3X'), encodeHeader(agent.session.header), events)).to.equal(false)
  })
})

describe('SessionWriter: held runs', () => {
  /** A writer on a file system that records every write and completes it at once. */
  function recordingWriter(): { writer: SessionWriter; session: Session & { events: SessionEvent[] }; written: string[] } {
    const written: string[] = []
    const fs: SessionFileSystem = {
      append: async (_path, text) => void written.push(Buffer.from(text).toString()),
      create: async (_path, text) => void written.push(Buffer.from(text).toString()),
      rename: async () => {},
      remove: async () => {},
      read: async () => '',
      list: async () => [],
      readHead: async () => '',
      readTail: async () => '',
      exists: async () => false,
    }
    const writer = new SessionWriter('s1', {
      folder: '/nowhere/',
      ready: Promise.resolve(),
      gate: new OpenFileGate(1),
      fs,
      onFailure: () => {},
      onRelease: () => {},
    })
    const events: SessionEvent[] = []
    const session = { id: 's1', header, events, append: () => { throw new Error('not used') } } as unknown as Session & { events: SessionEvent[] }
    writer.start(session, 'create')
    return { writer, session, written }
  }

  function add(target: { writer: SessionWriter; session: { events: SessionEvent[] } }, event: SessionEvent): void {
    target.session.events.push(event)
    target.writer.follow(target.session as unknown as Session)
  }

  it('holds a streaming step\'s deltas and writes them as one run before the next event', async () => {
    const target = recordingWriter()
    add(target, { seq: 0, type: 'step/start', data: { turn: 1, step: 1 } })
    for (const [i, text] of ['a', 'b', 'c'].entries()) add(target, delta(i + 1, text))
    add(target, { seq: 4, type: 'assistant/message', data: { turn: 1, step: 1, content: [{ type: 'text', text: 'abc' }] } })
    await target.writer.flushed()
    expect(target.written.join('')).to.equal(
      encodeHeader(header) +
        encodeEvent({ seq: 0, type: 'step/start', data: { turn: 1, step: 1 } }) +
        encodeRun(1, 1, 1, ['a', 'b', 'c']) +
        '{"seq":4,"type":"assistant/message","data":{"turn":1,"step":1,"content":[{"type":"text"}]},"streamed":true}\n',
    )
  })

  it('writes the held deltas on a flush, and the rest of the step as a later run', async () => {
    const target = recordingWriter()
    add(target, delta(0, 'a'))
    add(target, delta(1, 'b'))
    await target.writer.flushed()
    add(target, delta(2, 'c'))
    add(target, delta(3, 'd'))
    await target.writer.flushed()
    expect(target.written.join('')).to.equal(encodeHeader(header) + encodeRun(0, 1, 1, ['a', 'b']) + encodeRun(2, 1, 1, ['c', 'd']))
  })

  it('encodes a followed event when the write carrying it starts, not as the event is followed', async () => {
    const target = recordingWriter()
    let encoded = 0
    const data = { toJSON: () => ++encoded && { turn: 1, reason: { kind: 'completed' } } }
    add(target, { seq: 0, type: 'turn/end', data })
    expect(encoded).to.equal(0)
    await new Promise(setImmediate)
    expect(encoded).to.equal(1)
    await target.writer.flushed()
    expect(target.written.join('')).to.equal(encodeHeader(header) + encodeEvent({ seq: 0, type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } }))
  })

  it('writes a lone delta as an ordinary event line', async () => {
    const target = recordingWriter()
    add(target, delta(0, 'only'))
    add(target, { seq: 1, type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } })
    await target.writer.flushed()
    expect(target.written.join('')).to.equal(
      encodeHeader(header) + encodeEvent(delta(0, 'only')) + encodeEvent({ seq: 1, type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } }),
    )
  })

  it('starts a new run at another step and after maxRunDeltas deltas', async () => {
    const target = recordingWriter()
    const texts = piecesOf(maxRunDeltas + 2)
    for (const [i, text] of texts.entries()) add(target, delta(i, text))
    add(target, delta(texts.length, 'next step', 2))
    add(target, delta(texts.length + 1, 'more', 2))
    await target.writer.flushed()
    expect(target.written.join('')).to.equal(
      encodeHeader(header) +
        encodeRun(0, 1, 1, texts.slice(0, maxRunDeltas)) +
        encodeRun(maxRunDeltas, 1, 1, texts.slice(maxRunDeltas)) +
        encodeRun(texts.length, 1, 2, ['next step', 'more']),
    )
  })

  it('writes the held deltas when the session goes away', async () => {
    const target = recordingWriter()
    add(target, delta(0, 'a'))
    add(target, delta(1, 'b'))
    target.writer.release(false)
    await target.writer.flushed()
    expect(target.written.join('')).to.equal(encodeHeader(header) + encodeRun(0, 1, 1, ['a', 'b']))
  })
})

describe('SessionFiles: streamed steps', () => {
  let host: FilesHost
  beforeEach(async () => {
    host = await createFilesHost()
  })

  it('resumes a long streamed turn with exactly the events the live session had', async () => {
    const handle = await host.root.agents.create({ agentOptions: scriptedOptions })
    host.scripted.push({ deltas: piecesOf(plainDeltasPerStep + 40) })
    handle.agent.followup('go')
    await handle.agent.whenIdle()
    const live = JSON.parse(JSON.stringify(handle.agent.session.events))
    const { id } = handle.agent
    await handle.dispose()
    const resumed = await host.root.agents.resume(id, { agentOptions: scriptedOptions })
    expect(resumed.agent.session.events).to.deep.equal(live)
    expect((await host.lines(id)).filter((line) => 'deltas' in (line as object))).to.have.length(1)
    await resumed.dispose()
    await host.expectClean()
  })

  it('stores a resumed session\'s long step compactly, as the live session held it', async () => {
    const handle = await host.root.agents.create({ agentOptions: scriptedOptions })
    host.scripted.push({ deltas: piecesOf(plainDeltasPerStep + 40) })
    handle.agent.followup('go')
    await handle.agent.whenIdle()
    const live = handle.agent.session.events.map(isCompactDelta)
    const { id } = handle.agent
    await handle.dispose()
    const resumed = await host.root.agents.resume(id, { agentOptions: scriptedOptions })
    expect(resumed.agent.session.events.map(isCompactDelta)).to.deep.equal(live)
    await resumed.dispose()
    await host.expectClean()
  })

  it('keeps the file a prefix of the session when flushed in the middle of a stream', async () => {
    const pieces = piecesOf(10)
    let resume!: () => void
    const paused = new Promise<void>((resolve) => (resume = resolve))
    let reached!: () => void
    const halfway = new Promise<void>((resolve) => (reached = resolve))
    const unregister = host.root.models.register('pausing', {
      async *stream(_request: ModelRequest): AsyncIterable<StreamPart> {
        for (const [i, text] of pieces.entries()) {
          if (i === 5) {
            reached()
            await paused
          }
          yield { type: 'text-delta', text }
        }
        yield { type: 'finish', reason: 'stop' }
      },
    })
    const handle = await host.root.agents.create({ agentOptions: { provider: 'pausing', model: 'm' } })
    handle.agent.followup('go')
    await halfway
    await host.files.flush()
    const during = parseSessionFile(handle.agent.id, await host.text(handle.agent.id)).events
    expect(JSON.stringify(during)).to.equal(JSON.stringify(handle.agent.session.events))
    resume()
    await handle.agent.whenIdle()
    await host.files.flush()
    const after = parseSessionFile(handle.agent.id, await host.text(handle.agent.id)).events
    expect(JSON.stringify(after)).to.equal(JSON.stringify(handle.agent.session.events))
    await handle.dispose()
    unregister()
    await host.expectClean()
  })
})
