import { expect } from 'chai'
import { isTimerDelay, MAX_TIMER_DELAY_MS } from '../../../lib/async/timer-delay.ts'

describe('isTimerDelay (lib/async/timer-delay.ts)', () => {
  it('accepts a positive delay up to 2147483647 ms, fractions included', () => {
    expect([0.5, 1, 5000, MAX_TIMER_DELAY_MS].map(isTimerDelay)).to.deep.equal([true, true, true, true])
  })

  // Node replaces a delay past the limit by 1 ms: the timeout would fire at once
  it('refuses a delay past 2147483647 ms and Infinity', () => {
    expect([MAX_TIMER_DELAY_MS + 1, 2 ** 31, Number.POSITIVE_INFINITY].map(isTimerDelay)).to.deep.equal([false, false, false])
  })

  it('refuses zero, a negative delay and NaN', () => {
    expect([0, -0, -1, Number.NaN].map(isTimerDelay)).to.deep.equal([false, false, false, false])
  })
})
