import { expect } from 'chai'
import type { SessionEvent } from '../../lib/types.ts'
import { CHILD_EVENT, childCount, continuedUsage, GRANT_EVENT, grantOf, ownRecord, SNAPSHOT_EVENT } from '../../plugins/tree-budget/session-record.ts'

const treeSpent = { tokens: 10, modelRequests: 1, children: 1 }

function grantEvents(data: unknown): SessionEvent[] {
  return [{ seq: 0, type: GRANT_EVENT, data }]
}

describe('TreeBudget session records: the grant read back on resume', () => {
  it('reads a grant with a well-formed reservation', () => {
    expect(grantOf(grantEvents({ reservation: { tokens: 30 }, treeSpent }), 0)).to.deep.equal({ reservation: { tokens: 30 }, treeSpent })
  })

  it('reads a grant without a reservation', () => {
    expect(grantOf(grantEvents({ treeSpent }), 0)).to.deep.equal({ treeSpent })
  })

  for (const [what, reservation] of [
    ['a negative amount', { tokens: -50 }],
    ['a fractional amount', { modelRequests: 1.5 }],
    ['an amount that is not a number', { children: '3' }],
    ['an unknown field', { dollars: 5 }],
    ['an array', [30]],
    ['null', null],
  ] as const) {
    it(`skips a grant whose reservation has ${what}, as a malformed record`, () => {
      expect(grantOf(grantEvents({ reservation, treeSpent }), 0)).to.equal(undefined)
    })
  }
})

describe('TreeBudget session records: own usage read back on resume', () => {
  function messageEvents(usage: unknown): SessionEvent[] {
    return [
      { seq: 0, type: 'step/start', data: { turn: 1, step: 1 } },
      { seq: 1, type: 'assistant/message', data: { turn: 1, step: 1, content: [], usage } },
      { seq: 2, type: 'step/start', data: { turn: 1, step: 2 } },
      { seq: 3, type: 'assistant/message', data: { turn: 1, step: 2, content: [], usage: { inputTokens: 4, outputTokens: 1 } } },
    ]
  }
  const counted = { inputTokens: 4, outputTokens: 1, modelRequests: 2, children: 0 }

  it('sums the usage of every assistant/message and counts each step/start', () => {
    expect(ownRecord(messageEvents({ inputTokens: 2, outputTokens: 3 }), 0)).to.deep.equal({
      tokens: 10,
      modelRequests: 2,
      children: 0,
      usage: { inputTokens: 6, outputTokens: 4, modelRequests: 2, children: 0 },
    })
  })

  for (const [what, usage] of [
    ['no counts', {}],
    ['a negative count', { inputTokens: -1000, outputTokens: 1 }],
    ['a count that is not a number', { inputTokens: '5', outputTokens: 1 }],
  ] as const) {
    it(`skips the usage of an assistant/message with ${what}, as a malformed record`, () => {
      expect(ownRecord(messageEvents(usage), 0)).to.deep.equal({ tokens: 5, modelRequests: 2, children: 0, usage: counted })
    })
  }
})

describe('TreeBudget session records: the snapshot a reloaded budget starts from', () => {
  const snapshotUsage = { inputTokens: 40, outputTokens: 0, modelRequests: 2, children: 1 }
  function snapshotEvents(data: unknown): SessionEvent[] {
    return [
      { seq: 0, type: 'step/start', data: { turn: 1, step: 1 } },
      { seq: 1, type: 'assistant/message', data: { turn: 1, step: 1, content: [], usage: { inputTokens: 10, outputTokens: 0 } } },
      { seq: 2, type: SNAPSHOT_EVENT, data },
      { seq: 3, type: 'step/start', data: { turn: 2, step: 1 } },
      { seq: 4, type: 'assistant/message', data: { turn: 2, step: 1, content: [], usage: { inputTokens: 5, outputTokens: 1 } } },
    ]
  }

  it('starts from the last snapshot and adds only the events after it', () => {
    const record = ownRecord(snapshotEvents({ usage: snapshotUsage }), 0)
    expect([record.usage, record.tokens]).to.deep.equal([{ inputTokens: 45, outputTokens: 1, modelRequests: 3, children: 1 }, 46])
  })

  for (const [what, data] of [
    ['a negative count', { usage: { ...snapshotUsage, children: -1 } }],
    ['a malformed treeSpent', { usage: snapshotUsage, treeSpent: { tokens: 'all' } }],
    ['a started list that is not strings', { usage: snapshotUsage, started: [1] }],
    ['a reservation with a negative amount', { usage: snapshotUsage, reservation: { tokens: -5 } }],
  ] as const) {
    it(`skips a snapshot with ${what} and sums every event instead`, () => {
      expect(ownRecord(snapshotEvents(data), 0).usage).to.deep.equal({ inputTokens: 15, outputTokens: 1, modelRequests: 2, children: 0 })
    })
  }

  it('adds a continued budget/child record without counting its child a second time', () => {
    const events: SessionEvent[] = [
      { seq: 0, type: SNAPSHOT_EVENT, data: { usage: snapshotUsage } },
      { seq: 1, type: CHILD_EVENT, data: { childId: 'c1', usage: { inputTokens: 3, outputTokens: 1, modelRequests: 1, children: 0 }, continued: true } },
    ]
    expect(ownRecord(events, 0).usage).to.deep.equal({ inputTokens: 43, outputTokens: 1, modelRequests: 3, children: 1 })
  })

  it("sums only a child's continued budget/child records after the last snapshot, as what its parent holds beyond the child's snapshot", () => {
    const spent = { inputTokens: 3, outputTokens: 1, modelRequests: 1, children: 0 }
    const events: SessionEvent[] = [
      { seq: 0, type: CHILD_EVENT, data: { childId: 'c1', usage: spent, continued: true } },
      { seq: 1, type: SNAPSHOT_EVENT, data: { usage: snapshotUsage } },
      { seq: 2, type: CHILD_EVENT, data: { childId: 'c1', usage: spent, continued: true } },
      { seq: 3, type: CHILD_EVENT, data: { childId: 'c1', usage: spent } },
      { seq: 4, type: CHILD_EVENT, data: { childId: 'c2', usage: spent, continued: true } },
      { seq: 5, type: CHILD_EVENT, data: { childId: 'c1', usage: { ...spent, children: -1 }, continued: true } },
    ]
    expect(continuedUsage(events, 0, 'c1')).to.deep.equal(spent)
  })

  it("tells a child counted whole (budget/child) from one whose start alone a snapshot holds", () => {
    const events: SessionEvent[] = [
      { seq: 0, type: CHILD_EVENT, data: { childId: 'c1', usage: snapshotUsage } },
      { seq: 1, type: SNAPSHOT_EVENT, data: { usage: snapshotUsage, started: ['c2'] } },
    ]
    expect(['c1', 'c2', 'c3'].map((id) => childCount(events, 0, id))).to.deep.equal(['record', 'start', undefined])
  })
})
