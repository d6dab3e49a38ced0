import { expect } from 'chai'
import { PlainCopies, plainCopy, REMEMBERED_COPY_DEPTH } from '../../../lib/json/plain-copy.ts'

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

describe('PlainCopies', () => {
  it('hands back the same frozen copy for an object that still holds the same data', () => {
    const copies = new PlainCopies()
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] }
    const first = copies.copy(schema, 'value')
    expect(first).to.not.equal(schema)
    expect(Object.isFrozen(first.properties)).to.equal(true)
    expect(copies.copy(schema, 'value')).to.equal(first)
  })

  it('copies afresh an object changed since its copy, deep inside, in key order or in length', () => {
    const copies = new PlainCopies()
    const schema: Record<string, unknown> = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] }
    const first = copies.copy(schema, 'value')
    ;(schema.properties as Record<string, { type: string }>).answer.type = 'number'
    const second = copies.copy(schema, 'value')
    expect(second).to.not.equal(first)
    expect(second).to.deep.equal({ type: 'object', properties: { answer: { type: 'number' } }, required: ['answer'] })
    ;(schema.required as string[]).push('other')
    const third = copies.copy(schema, 'value')
    expect(third.required).to.deep.equal(['answer', 'other'])
    const keyed: Record<string, unknown> = { type: 'object', required: ['answer'] }
    const before = copies.copy(keyed, 'value')
    delete keyed.type
    keyed.type = 'object'
    const after = copies.copy(keyed, 'value')
    expect(after).to.not.equal(before)
    expect(Object.keys(after)).to.deep.equal(['required', 'type'])
  })

  it('reads each property once when it compares, and takes what a getter answers now', () => {
    const copies = new PlainCopies()
    let reads = 0
    const source = { inner: {} } as Record<string, unknown>
    Object.defineProperty(source.inner, 'n', { enumerable: true, get: () => (++reads <= 2 ? 1 : 2) })
    const first = copies.copy(source, 'value')
    expect(copies.copy(source, 'value')).to.equal(first)
    expect(reads).to.equal(2)
    const changed = copies.copy(source, 'value')
    expect(changed).to.deep.equal({ inner: { n: 2 } })
    expect(changed).to.not.equal(first)
  })

  it('keeps the same objects by identity and tells a kept object from a copied one', () => {
    const copies = new PlainCopies()
    const date = new Date(0)
    const source: Record<string, unknown> = { date }
    const first = copies.copy(source, 'value')
    expect(copies.copy(source, 'value')).to.equal(first)
    source.date = new Date(0)
    expect(copies.copy(source, 'value')).to.not.equal(first)
    source.date = {}
    expect(copies.copy(source, 'value').date).to.not.equal(source.date)
  })

  it('names a getter that throws on the comparison, as plainCopy does', () => {
    const copies = new PlainCopies()
    const source = { inner: { ok: 1 } } as Record<string, Record<string, unknown>>
    copies.copy(source, 'subagent request outputSchema')
    Object.defineProperty(source.inner, 'ok', {
      enumerable: true,
      get: () => {
        throw new Error('gone')
      },
    })
    expect(() => copies.copy(source, 'subagent request outputSchema')).to.throw(TypeError, 'subagent request outputSchema.inner.ok could not be read: gone')
  })

  it('copies afresh every time a value with a shared subtree, and a value deeper than it remembers', () => {
    const copies = new PlainCopies()
    const shared = { n: 1 }
    const diamond = { a: shared, b: shared }
    const first = copies.copy(diamond, 'value')
    expect(first.a).to.equal(first.b)
    expect(copies.copy(diamond, 'value')).to.not.equal(first)
    let deep: Record<string, unknown> = { leaf: true }
    for (let i = 0; i < REMEMBERED_COPY_DEPTH; i++) deep = { next: deep }
    expect(copies.copy(deep, 'value')).to.not.equal(copies.copy(deep, 'value'))
  })
})
