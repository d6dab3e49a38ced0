import { expect } from 'chai'
import type { SessionEvent } from '../../lib/types.ts'
import { GRANT_EVENT, grantOf } from '../../plugins/tree-budget/session-record.ts'

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
