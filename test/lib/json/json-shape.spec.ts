import { expect } from 'chai'
import { isFixedJson, jsonShapeOf, matchesJsonShape } from '../../../lib/json/json-shape.ts'
import type { JsonValue } from '../../../lib/types.ts'

/** The shape of `value`'s JSON text, as the schema cache makes it. */
function shapeOf(value: unknown) {
  return jsonShapeOf(JSON.parse(JSON.stringify(value)) as JsonValue)
}

const schema = { type: 'object', properties: { answer: { type: 'string', enum: ['a', 'b'] } }, required: ['answer'] }

describe('matchesJsonShape', () => {
  it('matches a fresh object with the same JSON text', () => {
    expect(matchesJsonShape(structuredClone(schema), shapeOf(schema))).to.equal(true)
  })

  it('rejects a value whose nested scalar changed', () => {
    const changed = structuredClone(schema)
    changed.properties.answer.type = 'integer'
    expect(matchesJsonShape(changed, shapeOf(schema))).to.equal(false)
  })

  it('rejects the same keys in another order, which is another text', () => {
    const reordered = { properties: schema.properties, type: 'object', required: ['answer'] }
    expect(matchesJsonShape(reordered, shapeOf(schema))).to.equal(false)
  })

  it('rejects an added key and a removed one', () => {
    expect(matchesJsonShape({ ...schema, title: 'x' }, shapeOf(schema))).to.equal(false)
    const { required: _required, ...fewer } = schema
    expect(matchesJsonShape(fewer, shapeOf(schema))).to.equal(false)
  })

  it('rejects an array of another length or an array where an object was', () => {
    expect(matchesJsonShape({ ...schema, required: ['answer', 'more'] }, shapeOf(schema))).to.equal(false)
    expect(matchesJsonShape({ ...schema, properties: [] }, shapeOf(schema))).to.equal(false)
  })

  it('rejects a value with a key whose value JSON would leave out', () => {
    expect(matchesJsonShape({ ...schema, title: undefined }, shapeOf(schema))).to.equal(false)
    expect(matchesJsonShape({ ...schema, title: () => 'x' }, shapeOf(schema))).to.equal(false)
  })

  it('rejects a value with a toJSON method, whose text would be what toJSON returns', () => {
    const disguised = { ...structuredClone(schema), toJSON: () => ({ type: 'object' }) }
    expect(matchesJsonShape(disguised, shapeOf(disguised))).to.equal(false)
  })

  it('ignores an enumerable key added to Object.prototype, as JSON.stringify does', () => {
    const prototype = Object.prototype as Record<string, unknown>
    prototype.polluted = 'yes'
    try {
      expect(matchesJsonShape(structuredClone(schema), shapeOf(schema))).to.equal(true)
    } finally {
      delete prototype.polluted
    }
  })

  it('matches -0 where the text has 0, as JSON.stringify writes it', () => {
    expect(matchesJsonShape({ type: 'number', default: -0 }, shapeOf({ type: 'number', default: 0 }))).to.equal(true)
  })

  it('answers false for a cyclic value without recursing past the shape', () => {
    const cyclic: Record<string, unknown> = { type: 'object' }
    cyclic.properties = cyclic
    expect(matchesJsonShape(cyclic, shapeOf({ type: 'object', properties: { type: 'object' } }))).to.equal(false)
  })
  it('rejects a boxed string where the text has an object of its characters, as JSON.stringify writes the string', () => {
    expect(matchesJsonShape({ enum: new String('a') }, shapeOf({ enum: { 0: 'a' } }))).to.equal(false)
  })

  it('rejects a boxed bigint where the text has an empty object, as JSON.stringify cannot write it', () => {
    expect(matchesJsonShape({ default: Object(1n) }, shapeOf({ default: {} }))).to.equal(false)
  })
})

describe('isFixedJson', () => {
  const deepFrozen = <T>(value: T): T => {
    if (typeof value === 'object' && value !== null) for (const key of Object.keys(value)) deepFrozen((value as Record<string, unknown>)[key])
    return Object.freeze(value)
  }

  it('says yes for scalars and for arrays and plain objects frozen all the way down', () => {
    expect(isFixedJson('text')).to.equal(true)
    expect(isFixedJson(null)).to.equal(true)
    expect(isFixedJson(deepFrozen({ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }))).to.equal(true)
  })

  it('says no when any object or array inside is not frozen', () => {
    expect(isFixedJson({ type: 'object' })).to.equal(false)
    expect(isFixedJson(Object.freeze({ required: ['a'] }))).to.equal(false)
    expect(isFixedJson(Object.freeze({ properties: Object.freeze({ a: { type: 'string' } }) }))).to.equal(false)
  })

  it('says no for a frozen object with a getter, which may answer another value on the next read', () => {
    const value = Object.defineProperty({}, 'type', { enumerable: true, get: () => 'object' })
    expect(isFixedJson(Object.freeze(value))).to.equal(false)
  })

  it('says no for a frozen object that is not a plain object', () => {
    expect(isFixedJson(Object.freeze(new Date(0)))).to.equal(false)
  })
})
