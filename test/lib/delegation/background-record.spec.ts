import { expect } from 'chai'
import { BACKGROUND_DELIVERED_EVENT, BACKGROUND_START_EVENT, interruptedBackgroundRuns } from '../../../lib/delegation/background-record.ts'
import type { SessionEvent } from '../../../lib/types.ts'

function log(...entries: [string, unknown][]): SessionEvent[] {
  return entries.map(([type, data], seq) => ({ seq, type, data }))
}

describe('interruptedBackgroundRuns', () => {
  it('lists a background run that started and was never delivered', () => {
    const events = log(['turn/start', { turn: 1 }], [BACKGROUND_START_EVENT, { runId: 'r1', label: 'census' }], ['turn/end', { turn: 1 }])
    expect(interruptedBackgroundRuns(events)).to.deep.equal([{ runId: 'r1', label: 'census' }])
  })

  it('leaves out a run whose delivery was recorded', () => {
    const events = log([BACKGROUND_START_EVENT, { runId: 'r1', label: 'a' }], [BACKGROUND_DELIVERED_EVENT, { runId: 'r1' }])
    expect(interruptedBackgroundRuns(events)).to.deep.equal([])
  })

  it('keeps the start order of several interrupted runs among delivered ones', () => {
    const events = log(
      [BACKGROUND_START_EVENT, { runId: 'r1', label: 'a' }],
      [BACKGROUND_START_EVENT, { runId: 'r2', label: 'b' }],
      [BACKGROUND_START_EVENT, { runId: 'r3', label: 'c' }],
      [BACKGROUND_DELIVERED_EVENT, { runId: 'r2' }],
    )
    expect(interruptedBackgroundRuns(events)).to.deep.equal([
      { runId: 'r1', label: 'a' },
      { runId: 'r3', label: 'c' },
    ])
  })

  it('skips malformed records (a log read from a file) instead of throwing', () => {
    const events = log(
      [BACKGROUND_START_EVENT, null],
      [BACKGROUND_START_EVENT, { runId: 7, label: 'a' }],
      [BACKGROUND_START_EVENT, { runId: 'r1', label: 'kept' }],
      [BACKGROUND_DELIVERED_EVENT, null],
      [BACKGROUND_DELIVERED_EVENT, 'r1'],
    )
    expect(interruptedBackgroundRuns(events)).to.deep.equal([{ runId: 'r1', label: 'kept' }])
  })

  it('finds nothing in a log without background runs', () => {
    expect(interruptedBackgroundRuns(log(['turn/start', { turn: 1 }], ['turn/end', { turn: 1 }]))).to.deep.equal([])
  })
})
