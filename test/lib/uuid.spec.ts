import { expect } from 'chai'
import { flatUuid } from '../../lib/uuid.ts'

describe('flatUuid', () => {
  it('returns a random version-4 UUID, different on every call', () => {
    const first = flatUuid()
    expect(first).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(flatUuid()).to.not.equal(first)
  })

  it('puts the prefix before the UUID', () => {
    expect(flatUuid('call_')).to.match(/^call_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  })
})
