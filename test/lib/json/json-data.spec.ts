import { expect } from 'chai'
import { jsonDataViolation, MAX_JSON_DATA_DEPTH } from '../../../lib/json/json-data.ts'

/** `levels` nested arrays, the innermost holding `leaf`. */
function nested(levels: number, leaf: unknown = 1): unknown {
  let value: unknown = leaf
  for (let i = 0; i < levels; i++) value = [value]
  return value
}

describe('jsonDataViolation', () => {
  it('accepts null, booleans, strings, finite numbers, arrays and plain objects', () => {
    const data = { a: null, b: true, c: 'text', d: -0, e: 1.5, f: [1, 'two', { g: [] }], h: Object.create(null) }
    expect(jsonDataViolation(data)).to.equal(undefined)
  })

  it('accepts own keys such as __proto__ and constructor as ordinary keys', () => {
    expect(jsonDataViolation(JSON.parse('{"__proto__":{"x":1},"constructor":"y"}'))).to.equal(undefined)
  })

  const scalars: [string, unknown, string][] = [
    ['undefined', undefined, 'undefined'],
    ['NaN', Number.NaN, 'NaN'],
    ['Infinity', Number.POSITIVE_INFINITY, 'Infinity'],
    ['a function', () => 1, 'a function'],
    ['a bigint', 1n, 'a bigint'],
    ['a symbol', Symbol('s'), 'a symbol'],
    ['a Date', new Date(0), 'a Date object'],
    ['a Map', new Map(), 'a Map object'],
    ['an object with a prototype that has no constructor', Object.create(Object.create(null)), 'an object with a custom prototype'],
  ]
  for (const [label, value, found] of scalars) {
    it(`rejects ${label} at the root, naming it`, () => {
      expect(jsonDataViolation(value)).to.deep.equal({ kind: 'not-json', path: 'data', found })
    })
  }

  it('names the path of a nested value that is not JSON', () => {
    const data = { items: [{ ok: 1 }, { 'odd key': { when: new Date(0) } }] }
    expect(jsonDataViolation(data)).to.deep.equal({ kind: 'not-json', path: 'data.items[1]["odd key"].when', found: 'a Date object' })
  })

  it('names an undefined property and an array hole', () => {
    expect(jsonDataViolation({ a: 1, b: undefined })).to.deep.equal({ kind: 'not-json', path: 'data.b', found: 'undefined' })
    // biome-ignore lint/suspicious/noSparseArray: the hole is the case
    expect(jsonDataViolation([1, , 3])).to.deep.equal({ kind: 'not-json', path: 'data[1]', found: 'undefined' })
  })

  it('uses the given root name in the path', () => {
    expect(jsonDataViolation({ n: 1n }, 'value')).to.deep.equal({ kind: 'not-json', path: 'value.n', found: 'a bigint' })
  })

  it(`accepts ${MAX_JSON_DATA_DEPTH} nested containers and rejects one more`, () => {
    expect(jsonDataViolation(nested(MAX_JSON_DATA_DEPTH))).to.equal(undefined)
    expect(jsonDataViolation(nested(MAX_JSON_DATA_DEPTH + 1))).to.deep.equal({ kind: 'too-deep' })
    expect(jsonDataViolation(nested(MAX_JSON_DATA_DEPTH + 1, []))).to.deep.equal({ kind: 'too-deep' })
  })

  it('reports a cycle as too deep instead of looping', () => {
    const data: Record<string, unknown> = {}
    data.self = data
    expect(jsonDataViolation(data)).to.deep.equal({ kind: 'too-deep' })
  })

  it('walks data nested 100,000 levels deep without overflowing the stack', () => {
    expect(jsonDataViolation(nested(100_000))).to.deep.equal({ kind: 'too-deep' })
  })
})
