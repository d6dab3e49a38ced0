import { expect } from 'chai'
import type { SessionEvent } from '../../lib/types.ts'
import { GRANT_EVENT, grantOf, ownRecord } from '../../plugins/tree-budget/session-record.ts'

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
