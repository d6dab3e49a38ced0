import { deepStrictEqual } from 'node:assert'
import { expect } from 'chai'
import { compactStoredSteps, isCompactDelta, plainDeltasPerStep, StreamedStep, streamedDelta } from '../../../lib/session/streamed-steps.ts'
import type { SessionEvent } from '../../../lib/types.ts'

const pieces = ['He', 'llo', ', ', 'wor', 'ld']

/** A step whose deltas 2.. (seq 10..) are compact, as the loop makes them. */
function compactStep(): { stream: StreamedStep; events: SessionEvent[] } {
  const stream = new StreamedStep(3, 2, pieces, 2, 10)
  const events = [10, 11, 12].map((seq) => stream.next(seq))
  return { stream, events }
}

function plainDelta(seq: number, text: string): SessionEvent {
  return Object.freeze({ seq, type: 'assistant/delta', data: Object.freeze({ turn: 3, step: 2, text }) })
}

describe('compact streamed deltas (lib/streamed-steps)', () => {
  for (const phase of ['while the step streams', 'after the message settled it'] as const) {
    describe(phase, () => {
      const events = () => {
        const made = compactStep()
        if (phase !== 'while the step streams') made.stream.settle(pieces.join(''))
        return made.events
      }

      it('reads as the frozen plain event it stands for, to JSON, spread, structuredClone and deep equality', () => {
        const [event] = events()
        const plain = plainDelta(10, ', ')
        expect(JSON.stringify(event)).to.equal(JSON.stringify(plain))
        expect({ ...event }).to.deep.equal(plain)
        expect(structuredClone(event)).to.deep.equal(plain)
        expect(event).to.deep.equal(plain)
        deepStrictEqual(event, plain)
        expect(Object.keys(event)).to.deep.equal(['seq', 'type', 'data'])
        expect(Object.getPrototypeOf(event)).to.equal(Object.prototype)
      })

      it('is frozen and hands out one frozen data object on every read', () => {
        const [, event] = events()
        expect(Object.isFrozen(event)).to.equal(true)
        expect(Object.isFrozen(event.data)).to.equal(true)
        expect(event.data).to.equal(event.data)
        expect(event.data).to.deep.equal({ turn: 3, step: 2, text: 'wor' })
      })

      it('gives each delta its own piece of the text', () => {
        expect(events().map((event) => streamedDelta(event)?.text)).to.deep.equal([', ', 'wor', 'ld'])
      })
    })
  }

  it('keeps a data object read while streaming as the same object after the step settled', () => {
    const { stream, events } = compactStep()
    const before = events[2].data
    stream.settle(pieces.join(''))
    expect(events[2].data).to.equal(before)
  })

  it('follows on only at the next seq, and not once settled', () => {
    const { stream } = compactStep()
    expect(stream.continuesAt(14)).to.equal(false)
    expect(stream.continuesAt(13)).to.equal(true)
    stream.settle(pieces.join(''))
    expect(stream.continuesAt(13)).to.equal(false)
  })

  it('tells its own compact events from plain ones', () => {
    const { events } = compactStep()
    expect(isCompactDelta(events[0])).to.equal(true)
    expect(isCompactDelta(plainDelta(10, ', '))).to.equal(false)
    expect(isCompactDelta({ ...events[0] })).to.equal(false)
  })

  describe('streamedDelta', () => {
    it('reads a plain delta shaped as the loop writes it', () => {
      expect(streamedDelta(plainDelta(4, 'hi'))).to.deep.equal({ turn: 3, step: 2, text: 'hi' })
    })

    const others: [string, SessionEvent][] = [
      ['another type', { seq: 0, type: 'assistant/message', data: { turn: 1, step: 1, text: 'x' } }],
      ['keys in another order', { seq: 0, type: 'assistant/delta', data: { step: 1, turn: 1, text: 'x' } }],
      ['an extra key', { seq: 0, type: 'assistant/delta', data: { turn: 1, step: 1, text: 'x', extra: true } }],
      ['a missing key', { seq: 0, type: 'assistant/delta', data: { turn: 1, text: 'x' } }],
      ['an empty text', { seq: 0, type: 'assistant/delta', data: { turn: 1, step: 1, text: '' } }],
      ['a string turn', { seq: 0, type: 'assistant/delta', data: { turn: '1', step: 1, text: 'x' } }],
      ['null data', { seq: 0, type: 'assistant/delta', data: null }],
    ]
    for (const [label, event] of others) {
      it(`answers undefined for a delta with ${label}`, () => {
        expect(streamedDelta(event)).to.equal(undefined)
      })
    }
  })
})

describe('compactStoredSteps', () => {
  /** A stored step: `step/start`, one plain delta per piece, then the message holding `text`. */
  function storedStep(pieces: readonly string[], text = pieces.join('')): SessionEvent[] {
    return [
      { seq: 0, type: 'step/start', data: { turn: 1, step: 1 } },
      ...pieces.map((piece, i) => ({ seq: i + 1, type: 'assistant/delta', data: { turn: 1, step: 1, text: piece } })),
      { seq: pieces.length + 1, type: 'assistant/message', data: { turn: 1, step: 1, content: [{ type: 'text', text }] } },
    ]
  }
  const longPieces = Array.from({ length: plainDeltasPerStep + 8 }, (_, i) => ` t${i}`)

  it('makes a long step compact past its first deltas, reading as before', () => {
    const events = storedStep(longPieces)
    const before = JSON.stringify(events)
    expect(compactStoredSteps(events)).to.equal(8)
    expect(events.map(isCompactDelta)).to.deep.equal(events.map((_, i) => i > plainDeltasPerStep && i <= longPieces.length))
    expect(JSON.stringify(events)).to.equal(before)
  })

  it('leaves a step whose deltas do not join into its message text as it is', () => {
    const events = storedStep(longPieces, 'something else')
    expect(compactStoredSteps(events)).to.equal(0)
    expect(events.some(isCompactDelta)).to.equal(false)
  })

  it('leaves a short step as it is', () => {
    const events = storedStep(longPieces.slice(0, plainDeltasPerStep))
    expect(compactStoredSteps(events)).to.equal(0)
  })
})
