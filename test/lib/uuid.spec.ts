import { expect } from 'chai'
import { flatUuid } from '../../lib/uuid.ts'
import { heapAfterGc } from '../support/heap.ts'

describe('flatUuid', () => {
  it('returns a random version-4 UUID, different on every call', () => {
    const first = flatUuid()
    expect(first).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(flatUuid()).to.not.equal(first)
  })

  it('puts the prefix before the UUID', () => {
    expect(flatUuid('call_')).to.match(/^call_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  })

  it('keeps each id as one flat string, not the rope of its pieces, once the generator is optimized', async () => {
    for (let i = 0; i < 20000; i++) flatUuid('call_')
    const ids = new Array<string>(5000)
    const before = await heapAfterGc()
    for (let i = 0; i < ids.length; i++) ids[i] = flatUuid('call_')
    const perId = ((await heapAfterGc()) - before) / ids.length
    // a flat 41-character string is 56 B; the rope of crypto.randomUUID()'s pieces is ≈ 480 B
    expect(perId).to.be.below(150)
    expect(new Set(ids).size).to.equal(ids.length)
  })

  it('sets the version to 4 and the variant to 10 in every id, and repeats none across refills of its random pool', () => {
    const ids = new Set<string>()
    for (let i = 0; i < 1000; i++) {
      const id = flatUuid()
      expect(id[14]).to.equal('4')
      expect('89ab').to.include(id[19])
      ids.add(id)
    }
    expect(ids.size).to.equal(1000)
  })

  it('rejects a prefix that is not printable ASCII of at most 28 characters with a RangeError', () => {
    expect(() => flatUuid('call é')).to.throw(RangeError, 'flatUuid prefix must be printable ASCII of at most 28 characters')
    expect(() => flatUuid('x'.repeat(29))).to.throw(RangeError, 'flatUuid prefix must be printable ASCII of at most 28 characters')
    expect(flatUuid('x'.repeat(28))).to.have.length(64)
  })
})
