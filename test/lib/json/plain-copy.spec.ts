import { expect } from 'chai'
import { plainCopy } from '../../../lib/json/plain-copy.ts'

describe('plainCopy', () => {
  it('copies nested plain objects and arrays deep and frozen, reading each property once', () => {
    let reads = 0
    const source = { list: [1, { a: 'x' }] } as Record<string, unknown>
    Object.defineProperty(source, 'counted', { enumerable: true, get: () => ++reads })
    const copy = plainCopy(source, 'value')
    expect(copy).to.deep.equal({ list: [1, { a: 'x' }], counted: 1 })
    expect(reads).to.equal(1)
    expect(copy.list).to.not.equal(source.list)
    expect(Object.isFrozen(copy) && Object.isFrozen(copy.list) && Object.isFrozen((copy.list as object[])[1])).to.equal(true)
  })

  it('keeps functions, class instances and primitives as they are', () => {
    const schema = Object.assign(() => undefined, { type: 'object' })
    const date = new Date(0)
    const copy = plainCopy({ schema, date, n: 1 }, 'value')
    expect(copy.schema).to.equal(schema)
    expect(copy.date).to.equal(date)
    expect(plainCopy('text', 'value')).to.equal('text')
  })

  it('keeps an own __proto__ key a plain key', () => {
    const copy = plainCopy(JSON.parse('{"__proto__": {"polluted": true}}') as object, 'value')
    expect(Object.getPrototypeOf(copy)).to.equal(Object.prototype)
    expect(Object.keys(copy)).to.deep.equal(['__proto__'])
  })

  it('names the property whose getter throws', () => {
    const source = { inner: {} }
    Object.defineProperty(source.inner, 'tokens', {
      enumerable: true,
      get: () => {
        throw new Error('no tokens')
      },
    })
    expect(() => plainCopy(source, 'subagent request budget')).to.throw(TypeError, 'subagent request budget.inner.tokens could not be read: no tokens')
  })

  it('rejects a cycle naming where it closes', () => {
    const cyclic: Record<string, unknown> = { inner: {} }
    ;(cyclic.inner as Record<string, unknown>).back = cyclic
    expect(() => plainCopy(cyclic, 'value')).to.throw(TypeError, 'value.inner.back refers to itself')
  })

  it('keeps a shared subtree shared and copies a deep value without recursion', () => {
    const shared = { n: 1 }
    const copy = plainCopy({ a: shared, b: shared }, 'value')
    expect(copy.a).to.equal(copy.b)
    let deep: Record<string, unknown> = { leaf: true }
    for (let i = 0; i < 100_000; i++) deep = { next: deep }
    expect(plainCopy(deep, 'value')).to.not.equal(deep)
  })
})
