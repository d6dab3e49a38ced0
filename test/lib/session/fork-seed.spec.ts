import { expect } from 'chai'
import { forkSeed } from '../../../lib/session/fork-seed.ts'
import type { SessionEvent } from '../../../lib/types.ts'

type Entry = [type: string, data: unknown]

function build(...entries: Entry[]): readonly SessionEvent[] {
  return Object.freeze(entries.map(([type, data], seq) => Object.freeze({ seq, type, data: Object.freeze(data) })))
}

const turnStart = (turn: number): Entry => ['turn/start', { turn, trigger: 'message' }]
const user = (text: string): Entry => ['user/message', { content: [{ type: 'text', text }], source: { kind: 'user' } }]
const step = (turn: number): Entry => ['step/start', { turn, step: 0 }]
const message = (turn: number, text: string): Entry => [
  'assistant/message',
  { turn, step: 0, content: [{ type: 'text', text }] },
]
const completed = (turn: number): Entry => ['turn/end', { turn, reason: { kind: 'completed' } }]
const turn = (n: number, text: string): Entry[] => [turnStart(n), user(`ask ${n}`), step(n), message(n, text), completed(n)]

describe('forkSeed', () => {
  it('returns an empty seed for an empty history', () => {
    expect(forkSeed([])).to.deep.equal([])
  })

  it('returns an empty seed when the parent never completed a turn', () => {
    const events = build(turnStart(0), user('ask 0'), step(0))
    expect(forkSeed(events)).to.deep.equal([])
  })

  it('returns the whole history when it ends with a turn/end', () => {
    const events = build(...turn(0, 'first'), ...turn(1, 'second'))
    expect(forkSeed(events)).to.deep.equal(events)
  })

  it('stops at the last turn/end and drops the unfinished trailing turn', () => {
    const events = build(...turn(0, 'first'), turnStart(1), user('ask 1'), step(1))
    expect(forkSeed(events)).to.have.length(5)
  })

  it('ends the seed with the last turn/end', () => {
    const events = build(...turn(0, 'first'), ...turn(1, 'second'), turnStart(2), user('ask 2'))
    const seed = forkSeed(events)
    expect(seed[seed.length - 1]).to.equal(events[9])
  })

  it('shares the frozen events instead of copying them', () => {
    const events = build(...turn(0, 'first'))
    const seed = forkSeed(events)
    for (let i = 0; i < seed.length; i++) expect(seed[i]).to.equal(events[i])
  })

  it('returns a new array rather than the parent log itself', () => {
    const events = build(...turn(0, 'first'))
    expect(forkSeed(events)).not.to.equal(events)
  })
})
