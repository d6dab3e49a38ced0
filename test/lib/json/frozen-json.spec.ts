import { expect } from 'chai'
import fc from 'fast-check'
import { frozenJsonWithin, JsonDepthError, parseFrozenJson, toFrozenJson } from '../../../lib/json/frozen-json.ts'
import type { JsonValue } from '../../../lib/types.ts'

type Dict = Record<string, unknown>

/** `[1, <hole>, 3]`: index 1 is absent, not `undefined`. */
function withHole(): unknown[] {
  const array = new Array<unknown>(3)
  array[0] = 1
  array[2] = 3
  return array
}

describe('toFrozenJson', () => {
  describe('with maxDepth', () => {
    /** `depth` arrays nested in each other. */
    const arrays = (depth: number): unknown => JSON.parse(`${'['.repeat(depth)}${']'.repeat(depth)}`)

    it('copies a value exactly maxDepth containers deep', () => {
      expect(toFrozenJson(arrays(3), 3)).to.deep.equal([[[]]])
    })

    it('throws JsonDepthError naming the limit for a value one level deeper', () => {
      const error = (() => {
        try {
          toFrozenJson(arrays(4), 3)
        } catch (thrown) {
          return thrown
        }
        throw new Error('expected a throw')
      })()
      expect(error).to.be.instanceOf(JsonDepthError)
      expect(error).to.be.instanceOf(TypeError)
      expect((error as JsonDepthError).message).to.equal('value is nested deeper than 3 levels')
      expect((error as JsonDepthError).maxDepth).to.equal(3)
    })

    it('stops at the limit without walking a value 100,000 levels deep', () => {
      expect(() => toFrozenJson(arrays(100_000), 64)).to.throw(JsonDepthError, 'value is nested deeper than 64 levels')
    })

    it('keeps scalars at any limit', () => {
      expect(toFrozenJson('text', 0)).to.equal('text')
    })
  })

  it('copies JSON data into an equal value', () => {
    const input = { a: [1, 'two', null, true, { b: [] }], c: {} }
    expect(toFrozenJson(input)).to.deep.equal(input)
  })

  it('returns a copy, not the input', () => {
    const input = { a: [1] }
    const copy = toFrozenJson(input) as Dict
    expect(copy).not.to.equal(input)
    expect(copy.a).not.to.equal(input.a)
  })

  it('freezes every level of the copy', () => {
    const copy = toFrozenJson({ a: { b: [{ c: 1 }] } }) as { a: { b: { c: number }[] } }
    expect(Object.isFrozen(copy)).to.equal(true)
    expect(Object.isFrozen(copy.a)).to.equal(true)
    expect(Object.isFrozen(copy.a.b)).to.equal(true)
    expect(Object.isFrozen(copy.a.b[0])).to.equal(true)
  })

  it('returns scalars unchanged', () => {
    expect([toFrozenJson('s'), toFrozenJson(1.5), toFrozenJson(false), toFrozenJson(null)]).to.deep.equal([
      's',
      1.5,
      false,
      null,
    ])
  })

  it('turns negative zero into zero', () => {
    expect(Object.is(toFrozenJson(-0), 0)).to.equal(true)
  })

  it('keeps __proto__ and constructor as own data keys with plain prototypes', () => {
    const copy = toFrozenJson(JSON.parse('{"__proto__": {"polluted": true}, "constructor": {"prototype": 1}}')) as Dict
    expect(Object.keys(copy)).to.deep.equal(['__proto__', 'constructor'])
    expect(Object.getPrototypeOf(copy)).to.equal(Object.prototype)
    expect(Object.getOwnPropertyDescriptor(copy, '__proto__')?.value).to.deep.equal({ polluted: true })
    expect(Object.hasOwn(Object.prototype, 'polluted')).to.equal(false)
    expect(({} as Dict).polluted).to.equal(undefined)
  })

  it('keeps a __proto__ key when the copy goes through JSON text', () => {
    const copy = toFrozenJson(JSON.parse('{"__proto__": {"a": 1}}'))
    expect(JSON.stringify(copy)).to.equal('{"__proto__":{"a":1}}')
  })

  it('keeps the key order of the input', () => {
    expect(Object.keys(toFrozenJson({ z: 1, a: { q: 1 }, m: 2 }) as Dict)).to.deep.equal(['z', 'a', 'm'])
  })

  it('copies a null-prototype object into a plain one', () => {
    const copy = toFrozenJson(Object.assign(Object.create(null), { a: 1 }))
    expect(Object.getPrototypeOf(copy)).to.equal(Object.prototype)
  })

  it('keeps a shared subtree shared', () => {
    const shared = { x: 1 }
    const copy = toFrozenJson({ a: shared, b: [shared] }) as { a: unknown; b: unknown[] }
    expect(copy.a).to.equal(copy.b[0])
  })

  it('copies 10,000 levels of nesting without overflowing the stack', () => {
    let value: unknown = 'leaf'
    for (let i = 0; i < 10_000; i++) value = { next: [value] }
    let copy = toFrozenJson(value)
    let levels = 0
    while (typeof copy === 'object' && copy !== null && !Array.isArray(copy)) {
      copy = (copy.next as unknown[])[0] as typeof copy
      levels++
    }
    expect([levels, copy]).to.deep.equal([10_000, 'leaf'])
  })

  const nonJson: [string, unknown, string][] = [
    ['a function at the root', () => 1, 'value is not JSON data (function)'],
    ['undefined at the root', undefined, 'value is not JSON data (undefined)'],
    ['a nested function', { a: [1, () => 1] }, 'value.a[1] is not JSON data (function)'],
    ['an undefined property', { 'a b': undefined }, 'value["a b"] is not JSON data (undefined)'],
    ['a symbol', { s: Symbol('s') }, 'value.s is not JSON data (symbol)'],
    ['a bigint', [1n], 'value[0] is not JSON data (bigint)'],
    ['NaN', { n: Number.NaN }, 'value.n is not JSON data (non-finite number)'],
    ['Infinity', [Number.NEGATIVE_INFINITY], 'value[0] is not JSON data (non-finite number)'],
    ['a Date', { when: new Date(0) }, 'value.when is not JSON data (non-plain object)'],
    ['a Map at the root', new Map(), 'value is not JSON data (non-plain object)'],
    ['a sparse array hole', withHole(), 'value[1] is not JSON data (undefined)'],
  ]
  for (const [title, input, message] of nonJson) {
    it(`throws a TypeError for ${title}`, () => {
      expect(() => toFrozenJson(input)).to.throw(TypeError, message)
    })
  }

  it('throws a TypeError naming where a cycle closes', () => {
    const cycle: Dict = {}
    cycle.a = { b: [cycle] }
    expect(() => toFrozenJson(cycle)).to.throw(TypeError, 'value.a.b[0] is not JSON data (circular reference)')
  })

  it('throws a TypeError for a root that holds itself', () => {
    const cycle: Dict = { a: 1 }
    cycle.self = cycle
    expect(() => toFrozenJson(cycle)).to.throw(TypeError, 'value.self is not JSON data (circular reference)')
  })

  it('throws a TypeError for a cycle that closes below the root', () => {
    const inner: Dict = {}
    inner.c = [inner]
    expect(() => toFrozenJson({ a: { b: inner } })).to.throw(TypeError, 'value.a.b.c[0] is not JSON data (circular reference)')
  })

  it('copies a flat object with a __proto__ key into an own data key without touching the prototype', () => {
    const copy = toFrozenJson(JSON.parse('{"__proto__": 1, "toString": 2}')) as Dict
    expect(Object.keys(copy)).to.deep.equal(['__proto__', 'toString'])
    expect(Object.getPrototypeOf(copy)).to.equal(Object.prototype)
    expect(Object.getOwnPropertyDescriptor(copy, '__proto__')).to.deep.equal({ value: 1, enumerable: true, writable: false, configurable: false })
  })

  it('turns negative zero into zero at every level', () => {
    const copy = toFrozenJson([-0, { x: -0, y: [-0] }, -0]) as [number, { x: number; y: number[] }, number]
    expect([copy[0], copy[1].x, copy[1].y[0], copy[2]].map((n) => Object.is(n, 0))).to.deep.equal([true, true, true, true])
  })

  it('names a non-JSON root value that follows a nested container by its own key', () => {
    expect(() => toFrozenJson({ a: { b: 1 }, c: () => 1 })).to.throw(TypeError, 'value.c is not JSON data (function)')
    expect(() => toFrozenJson([[1], Number.NaN])).to.throw(TypeError, 'value[1] is not JSON data (non-finite number)')
  })

  it('reads each property once, before and after the first nested container', () => {
    const reads: string[] = []
    const input = {
      get a() {
        reads.push('a')
        return 1
      },
      get b() {
        reads.push('b')
        return { c: 2 }
      },
      get d() {
        reads.push('d')
        return 3
      },
    }
    expect(toFrozenJson(input)).to.deep.equal({ a: 1, b: { c: 2 }, d: 3 })
    expect(reads).to.deep.equal(['a', 'b', 'd'])
  })

  it('throws JsonDepthError for a container at a limit of 0', () => {
    expect(() => toFrozenJson({}, 0)).to.throw(JsonDepthError, 'value is nested deeper than 0 levels')
  })

  it('copies keys named like Object.prototype members as own data properties', () => {
    const copy = toFrozenJson(JSON.parse('{"toString":1,"hasOwnProperty":[2],"plain":3}')) as Dict
    expect(Object.keys(copy)).to.deep.equal(['toString', 'hasOwnProperty', 'plain'])
    expect(Object.getOwnPropertyDescriptor(copy, 'toString')).to.deep.equal({ value: 1, enumerable: true, writable: false, configurable: false })
    expect(copy.hasOwnProperty).to.deep.equal([2])
  })
})

/** True when `value` and every object and array inside it is frozen. */
function deepFrozen(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true
  return Object.isFrozen(value) && Object.values(value).every(deepFrozen)
}

describe('parseFrozenJson', () => {
  it('gives what toFrozenJson gives for the parsed text, deep-frozen, for any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (value) => {
        const text = JSON.stringify(value)
        const parsed = parseFrozenJson(text)
        expect(parsed).to.deep.equal(toFrozenJson(JSON.parse(text)))
        expect(deepFrozen(parsed)).to.equal(true)
      }),
    )
  })

  it('turns negative zero into zero at the root and at every level', () => {
    expect(Object.is(parseFrozenJson('-0'), 0)).to.equal(true)
    const parsed = parseFrozenJson('{"a":-0,"b":[-0,{"c":-0}],"__proto__":-0}') as { a: number; b: [number, { c: number }] }
    const zeros = [parsed.a, parsed.b[0], parsed.b[1].c, Object.getOwnPropertyDescriptor(parsed, '__proto__')?.value]
    expect(zeros.map((n) => Object.is(n, 0))).to.deep.equal([true, true, true, true])
  })

  it('keeps __proto__ as an own data key with a plain prototype', () => {
    const parsed = parseFrozenJson('{"__proto__": {"polluted": true}}') as Dict
    expect(Object.keys(parsed)).to.deep.equal(['__proto__'])
    expect(Object.getPrototypeOf(parsed)).to.equal(Object.prototype)
    expect(Object.hasOwn(Object.prototype, 'polluted')).to.equal(false)
  })

  it('adds no own key for an enumerable key someone put on Object.prototype', () => {
    Object.defineProperty(Object.prototype, 'inherited', { value: -0, enumerable: true, configurable: true, writable: true })
    try {
      const parsed = parseFrozenJson('{"a":{"b":1}}') as { a: object }
      expect([Object.hasOwn(parsed, 'inherited'), Object.hasOwn(parsed.a, 'inherited')]).to.deep.equal([false, false])
    } finally {
      delete (Object.prototype as Dict).inherited
    }
  })

  it('freezes 10,000 levels of nesting without overflowing the stack', () => {
    let parsed = parseFrozenJson(`${'{"next":['.repeat(10_000)}"leaf"${']}'.repeat(10_000)}`)
    let levels = 0
    while (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
      expect(Object.isFrozen(parsed)).to.equal(true)
      parsed = (parsed.next as JsonValue[])[0]!
      levels++
    }
    expect([levels, parsed]).to.deep.equal([10_000, 'leaf'])
  })

  it('throws JSON.parse’s SyntaxError for text that is not JSON', () => {
    expect(() => parseFrozenJson('{"a":')).to.throw(SyntaxError)
  })
})

/** Frozen arrays nested `levels` deep around a frozen leaf object: `levels + 1` containers on its one path. */
function frozenChain(levels: number, leaf: object = Object.freeze({ leaf: 1 })): object {
  let value: object = leaf
  for (let i = 0; i < levels; i++) value = Object.freeze([value])
  return value
}

/** `[x, x]` nested `levels` times: `levels + 1` containers, 2^levels paths. */
function sharedAtEveryLevel(levels: number): object {
  let value: object = Object.freeze({ leaf: 1 })
  for (let i = 0; i < levels; i++) value = Object.freeze([value, value])
  return value
}

describe('frozenJsonWithin', () => {
  it('returns a deep-frozen JSON value itself, without copying it', () => {
    const value = toFrozenJson({ answer: 'ok', items: [{ n: 1 }] })
    expect(frozenJsonWithin(value, 64)).to.equal(value)
  })

  it('returns a flat deep-frozen object or array itself', () => {
    const object = toFrozenJson({ answer: 'ok', n: 1 })
    const array = toFrozenJson(['a', 1, null])
    expect(frozenJsonWithin(object, 64)).to.equal(object)
    expect(frozenJsonWithin(array, 64)).to.equal(array)
  })

  it('copies a flat object that is not frozen', () => {
    const value = { answer: 'ok' }
    const result = frozenJsonWithin(value, 64)
    expect(result).to.not.equal(value)
    expect(Object.isFrozen(result)).to.equal(true)
  })

  it('copies a value with an unfrozen container, as toFrozenJson does', () => {
    const inner = { n: 1 }
    const value = Object.freeze({ items: Object.freeze([inner]) })
    const result = frozenJsonWithin(value, 64) as { items: { n: number }[] }
    expect(result).to.not.equal(value)
    expect(result).to.deep.equal({ items: [{ n: 1 }] })
    expect(Object.isFrozen(result.items[0])).to.equal(true)
  })

  it('accepts a value exactly as deep as the limit and rejects one level more with JsonDepthError', () => {
    expect(frozenJsonWithin(frozenChain(63), 64)).to.be.an('array')
    expect(() => frozenJsonWithin(frozenChain(64), 64)).to.throw(JsonDepthError, 'value is nested deeper than 64 levels')
  })

  it('measures a value that shares one container at each of 40 levels by its 41 containers, not its 2^40 paths', () => {
    const value = sharedAtEveryLevel(40)
    expect(frozenJsonWithin(value, 64)).to.equal(value)
  })

  it('counts a shared subtree from the deepest place it appears', () => {
    const shared = frozenChain(39)
    // 40 containers in `shared`; first met right under the root (depth 2), then under 30 more levels
    const value = Object.freeze({ near: shared, far: frozenChain(30, Object.freeze({ shared })) })
    expect(() => frozenJsonWithin(value, 64)).to.throw(JsonDepthError, 'value is nested deeper than 64 levels')
    expect(frozenJsonWithin(value, 72)).to.equal(value)
  })
})

describe('toFrozenJson: a depth limit with shared subtrees', () => {
  /** Plain (unfrozen) arrays nested `levels` deep around `leaf`. */
  function chain(levels: number, leaf: object): object {
    let value: object = leaf
    for (let i = 0; i < levels; i++) value = [value]
    return value
  }

  it('counts a shared subtree from the deepest place it appears, though it copies it once', () => {
    const shared = chain(39, { leaf: 1 })
    const value = { near: shared, far: chain(30, { shared }) }
    expect(() => toFrozenJson(value, 64)).to.throw(JsonDepthError, 'value is nested deeper than 64 levels')
    const copy = toFrozenJson(value, 72) as { near: unknown; far: unknown }
    let inner: unknown = copy.far
    for (let i = 0; i < 30; i++) inner = (inner as unknown[])[0]
    expect((inner as { shared: unknown }).shared).to.equal(copy.near)
  })
})
