import { expect } from 'chai'
import type { SessionHeader } from '../../lib/types.ts'
import { SessionFileError } from '../../plugins/session-files/errors.ts'
import {
  assertSessionId,
  disposalLine,
  encodeEvent,
  encodeHeader,
  holdsEarlierState,
  isSafeSessionId,
  parseSessionFile,
} from '../../plugins/session-files/file-format.ts'

const header: SessionHeader = Object.freeze({ id: 's1', createdAt: 5, delegationDepth: 2, seedLength: 0 })

describe('session file format, version 3', () => {
  it('writes the header line as {"version":3,"header":…} with a newline', () => {
    expect(encodeHeader(header)).to.equal('{"version":3,"header":{"id":"s1","createdAt":5,"delegationDepth":2,"seedLength":0}}\n')
  })

  it('writes an event as {"seq","type","data"} with a newline', () => {
    expect(encodeEvent({ seq: 3, type: 'turn/start', data: { turn: 1, trigger: 'message' } })).to.equal(
      '{"seq":3,"type":"turn/start","data":{"turn":1,"trigger":"message"}}\n',
    )
  })

  it('writes undefined data as null', () => {
    expect(encodeEvent({ seq: 0, type: 'note', data: undefined })).to.equal('{"seq":0,"type":"note","data":null}\n')
  })

  it('throws for data JSON cannot render', () => {
    expect(() => encodeEvent({ seq: 0, type: 'note', data: { big: 1n } })).to.throw(TypeError)
  })

  it('reads back what it writes', () => {
    const event = { seq: 0, type: 'user/message', data: { content: [{ type: 'text', text: 'a\nb\u2028c' }] } }
    const parsed = parseSessionFile('s1', encodeHeader(header) + encodeEvent(event))
    expect(parsed).to.deep.equal({ header, events: [event], isTorn: false, isDisposed: false })
  })

  it('reads a file with a header and no events', () => {
    expect(parseSessionFile('s1', encodeHeader(header))).to.deep.equal({ header, events: [], isTorn: false, isDisposed: false })
  })

  it('drops a last line without its newline and reports the file torn', () => {
    const text = `${encodeHeader(header)}${encodeEvent({ seq: 0, type: 'a', data: 1 })}{"seq":1,"ty`
    expect(parseSessionFile('s1', text)).to.deep.equal({ header, events: [{ seq: 0, type: 'a', data: 1 }], isTorn: true, isDisposed: false })
  })

  it('reads a disposed session: the disposal record {"disposed":true} ends the file', () => {
    const event = { seq: 0, type: 'a', data: 1 }
    expect(disposalLine).to.equal('{"disposed":true}\n')
    const parsed = parseSessionFile('s1', encodeHeader(header) + encodeEvent(event) + disposalLine)
    expect(parsed).to.deep.equal({ header, events: [event], isTorn: false, isDisposed: true })
  })

  it('refuses a disposal record before another line, or in a file of format 2', () => {
    const event = encodeEvent({ seq: 0, type: 'a', data: 1 })
    expect(() => parseSessionFile('s1', encodeHeader(header) + disposalLine + event)).to.throw(
      SessionFileError,
      'session file "s1" line 2 is not a valid session event',
    )
    const formatTwo = `${JSON.stringify({ version: 2, header })}\n`
    expect(() => parseSessionFile('s1', formatTwo + event + disposalLine)).to.throw(
      SessionFileError,
      'session file "s1" line 3 is not a valid session event',
    )
  })

  it('reads a file of format 2 as before: no disposal record', () => {
    const event = { seq: 0, type: 'a', data: 1 }
    const text = `${JSON.stringify({ version: 2, header })}\n${encodeEvent(event)}`
    expect(parseSessionFile('s1', text)).to.deep.equal({ header, events: [event], isTorn: false, isDisposed: false })
  })

  it('throws SessionFileError with code SESSION_FILE for a malformed file', () => {
    expect(() => parseSessionFile('s1', 'nonsense\n'))
      .to.throw(SessionFileError, 'session file "s1" line 1 is not a session header')
      .with.property('code', 'SESSION_FILE')
  })
})

/** A readable test title for an id: long ones shortened, invisible characters escaped. */
function label(id: string): string {
  const short = id.length > 20 ? `${id.slice(0, 8)}…(${id.length})` : id
  return JSON.stringify(short).replace(/\u007f/g, '\\u007f')
}

describe('session ids as file names', () => {
  for (const id of ['s1', 'a.b', '3f1c-uuid', '.x', 'x'.repeat(200), 'ünïcode']) {
    it(`accepts ${label(id)}`, () => {
      expect(isSafeSessionId(id)).to.equal(true)
    })
  }

  for (const id of ['', '.', '..', '../x', 'x/..', 'a/b', 'a\\b', 'a..b', 'a\nb', 'a\u007fb', 'x'.repeat(201), 'ü'.repeat(101)]) {
    it(`rejects ${label(id)}`, () => {
      expect(() => assertSessionId(id)).to.throw(SessionFileError, `session id "${id}" is not a safe file name`)
    })
  }

  it('rejects an id that is not a string', () => {
    expect(() => assertSessionId(42)).to.throw(SessionFileError, 'session id "42" is not a safe file name')
  })
})

describe('holdsEarlierState', () => {
  const events = [
    { seq: 0, type: 'turn/start', data: { turn: 1, trigger: 'message' } },
    { seq: 1, type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } },
  ]
  const file = (count: number, tail = '') => encodeHeader(header) + events.slice(0, count).map(encodeEvent).join('') + tail

  it('recognises the file of the same session holding its first events, a torn last line or a disposal record ignored', () => {
    expect(holdsEarlierState(file(2), encodeHeader(header), events)).to.equal(true)
    expect(holdsEarlierState(file(1, disposalLine), encodeHeader(header), events)).to.equal(true)
    expect(holdsEarlierState(file(1, '{"seq":1,"ty'), encodeHeader(header), events)).to.equal(true)
    expect(holdsEarlierState(file(0), encodeHeader(header), events)).to.equal(true)
  })

  it('refuses a file with another header, more events, a different event or no valid format', () => {
    expect(holdsEarlierState(file(2), encodeHeader({ ...header, createdAt: 6 }), events)).to.equal(false)
    expect(holdsEarlierState(file(2), encodeHeader(header), events.slice(0, 1))).to.equal(false)
    expect(holdsEarlierState(file(1), encodeHeader(header), [{ seq: 0, type: 'turn/start', data: { turn: 2, trigger: 'message' } }])).to.equal(false)
    expect(holdsEarlierState('stored history\n', encodeHeader(header), events)).to.equal(false)
  })
})
