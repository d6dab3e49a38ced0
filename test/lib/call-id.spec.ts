import { expect } from 'chai'
import { newCallId } from '../../lib/call-id.ts'

describe('newCallId', () => {
  it('issues a different call_ id every time', () => {
    const ids = Array.from({ length: 1000 }, () => newCallId())
    expect(new Set(ids).size).to.equal(1000)
    for (const id of ids) expect(id).to.match(/^call_[0-9a-f-]{36}$/)
  })
})
