import { expect } from 'chai'
import { reconnectDelay } from '../../../lib/mcp/reconnect-delay.ts'

describe('lib/mcp/reconnect-delay', () => {
  it('doubles from the first delay after each failure in a row', () => {
    expect([1, 2, 3, 4].map((failures) => reconnectDelay(failures, 1000, 30_000))).to.deep.equal([1000, 2000, 4000, 8000])
  })

  it('never waits longer than the longest delay, however many failures', () => {
    expect([6, 50, 10_000].map((failures) => reconnectDelay(failures, 1000, 30_000))).to.deep.equal([30_000, 30_000, 30_000])
  })
})
