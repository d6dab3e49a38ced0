import Ajv from 'ajv'
import { expect } from 'chai'
import sinon from 'sinon'
import { formatInvalidArguments, jsonViolations } from '../../../lib/schema/json-validation.ts'

type Dict = Record<string, unknown>

const schema = {
  type: 'object',
  properties: {
    answer: { type: 'integer' },
    items: { type: 'array', items: { type: 'string' } },
    kind: { type: 'string', enum: ['a', 'b'] },
    mode: { type: 'string', const: 'fast' },
    choice: { oneOf: [{ type: 'string' }, { type: 'number' }] },
    nested: { type: 'object', properties: { 'a b': { type: 'boolean' }, 'x/y~z': { type: 'null' } } },
  },
  required: ['answer'],
  additionalProperties: false,
}

function caught(run: () => unknown): unknown {
  try {
    run()
  } catch (error) {
    return error
  }
  throw new Error('expected a throw')
}

describe('jsonViolations', () => {
  describe('messages', () => {
    it('returns no violations for a valid value', () => {
      expect(jsonViolations(schema, { answer: 1, items: ['x'], kind: 'a', mode: 'fast', choice: 2 })).to.deep.equal([])
    })

    it('names a wrong type at its property path', () => {
      expect(jsonViolations(schema, { answer: 1.5 })).to.deep.equal(['value.answer must be integer'])
    })

    it('names an array element by its index', () => {
      expect(jsonViolations(schema, { answer: 1, items: ['a', 'b', 3] })).to.deep.equal(['value.items[2] must be string'])
    })

    it('reports a missing required property', () => {
      expect(jsonViolations(schema, {})).to.deep.equal(['value must have required property "answer"'])
    })

    it('reports an additional property', () => {
      expect(jsonViolations(schema, { answer: 1, extra: true })).to.deep.equal([
        'value must NOT have additional property "extra"',
      ])
    })

    it('lists the allowed values of an enum', () => {
      expect(jsonViolations(schema, { answer: 1, kind: 'c' })).to.deep.equal([
        'value.kind must be equal to one of: "a", "b"',
      ])
    })

    it('shows the constant a const wants', () => {
      expect(jsonViolations(schema, { answer: 1, mode: 'slow' })).to.deep.equal(['value.mode must be equal to constant "fast"'])
    })

    it('reports every branch and the oneOf itself when no branch matches', () => {
      expect(jsonViolations(schema, { answer: 1, choice: true })).to.deep.equal([
        'value.choice must be string',
        'value.choice must be number',
        'value.choice must match exactly one schema in oneOf',
      ])
    })

    it('quotes property names that are not identifiers', () => {
      expect(jsonViolations(schema, { answer: 1, nested: { 'a b': 1 } })).to.deep.equal(['value.nested["a b"] must be boolean'])
    })

    it('unescapes ~1 and ~0 in the JSON pointer', () => {
      expect(jsonViolations(schema, { answer: 1, nested: { 'x/y~z': 0 } })).to.deep.equal([
        'value.nested["x/y~z"] must be null',
      ])
    })

    it('renders a numeric property name of an object as a quoted key', () => {
      const numbered = { type: 'object', properties: { '2': { type: 'string' } } }
      expect(jsonViolations(numbered, { '2': 0 })).to.deep.equal(['value["2"] must be string'])
    })

    it('reports a wrong root as value', () => {
      expect(jsonViolations(schema, [])).to.deep.equal(['value must be object'])
    })

    it('lists several violations in ajv order', () => {
      expect(jsonViolations(schema, { items: [1], extra: 0 })).to.deep.equal([
        'value must have required property "answer"',
        'value must NOT have additional property "extra"',
        'value.items[0] must be string',
      ])
    })

    it('keeps ajv wording for keywords outside the subset', () => {
      expect(jsonViolations({ type: 'string', minLength: 3 }, 'ab')).to.deep.equal([
        'value must NOT have fewer than 3 characters',
      ])
    })
  })

  describe('inherited and prototype-named properties', () => {
    it('does not count an inherited constructor as a present required property', () => {
      const withConstructor = { type: 'object', properties: { constructor: { type: 'string' } }, required: ['constructor'] }
      expect(jsonViolations(withConstructor, {})).to.deep.equal(['value must have required property "constructor"'])
    })

    it('does not validate an inherited constructor against its property schema', () => {
      const withConstructor = { type: 'object', properties: { constructor: { type: 'string' } } }
      expect(jsonViolations(withConstructor, {})).to.deep.equal([])
    })

    it('validates an own __proto__ property against its declared schema', () => {
      const proto = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"}},"additionalProperties":false}')
      expect(jsonViolations(proto, JSON.parse('{"__proto__": 5}'))).to.deep.equal(['value.__proto__ must be string'])
    })

    it('accepts a declared own __proto__ property under closed additionalProperties', () => {
      const proto = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"}},"additionalProperties":false}')
      expect(jsonViolations(proto, JSON.parse('{"__proto__": "x"}'))).to.deep.equal([])
    })

    it('reports a missing required __proto__ property', () => {
      const proto = JSON.parse('{"type":"object","properties":{"__proto__":{}},"required":["__proto__"]}')
      expect(jsonViolations(proto, {})).to.deep.equal(['value must have required property "__proto__"'])
    })

    it('keeps names that start with NUL apart from escaped ones', () => {
      const proto = JSON.parse('{"type":"object","properties":{"__proto__":{}},"additionalProperties":false}')
      expect(jsonViolations(proto, { '\u0000__proto__': 1 })).to.deep.equal([
        'value must NOT have additional property "\\u0000__proto__"',
      ])
    })

    it('reports an undeclared own __proto__ property as additional', () => {
      const closed = { type: 'object', additionalProperties: false }
      expect(jsonViolations(closed, JSON.parse('{"__proto__": {"polluted": true}}'))).to.deep.equal([
        'value must NOT have additional property "__proto__"',
      ])
    })

    it('leaves Object.prototype untouched while validating __proto__ keys', () => {
      const proto = JSON.parse('{"type":"object","properties":{"__proto__":{"type":"object"}}}')
      jsonViolations(proto, JSON.parse('{"__proto__": {"polluted": true}}'))
      expect(Object.hasOwn(Object.prototype, 'polluted')).to.equal(false)
    })
  })

  describe('compilation', () => {
    afterEach(() => {
      sinon.restore()
    })

    it('compiles a schema object once and reuses its validator', () => {
      const compile = sinon.spy(Ajv.prototype, 'compile')
      // outside the subset (minProperties), so ajv compiles it
      const once = { type: 'object', properties: { n: { type: 'number' } }, minProperties: 1 }
      expect(jsonViolations(once, { n: 'x' })).to.deep.equal(['value.n must be number'])
      expect(jsonViolations(once, { n: 1 })).to.deep.equal([])
      expect(jsonViolations(once, { n: true })).to.deep.equal(['value.n must be number'])
      expect(compile.callCount).to.equal(1)
    })

    it('compiles equal but distinct schema objects separately', () => {
      const compile = sinon.spy(Ajv.prototype, 'compile')
      jsonViolations({ type: 'string' }, 'a')
      jsonViolations({ type: 'string' }, 'a')
      expect(compile.callCount).to.equal(2)
    })

    it('keeps the first compiled validator when the schema object is later mutated', () => {
      const mutable: Dict = { type: 'string' }
      jsonViolations(mutable, 'x')
      mutable.type = 'number'
      expect(jsonViolations(mutable, 'x')).to.deep.equal([])
    })

    it('compiles a frozen schema', () => {
      const frozen = Object.freeze({ type: 'object', required: Object.freeze(['a']) })
      expect(jsonViolations(frozen, {})).to.deep.equal(['value must have required property "a"'])
    })

    it('compiles two distinct schemas that share an $id', () => {
      const first = { $id: 'https://example.test/s', type: 'string' }
      const second = { $id: 'https://example.test/s', type: 'number' }
      expect(jsonViolations(first, 1)).to.deep.equal(['value must be string'])
      expect(jsonViolations(second, 1)).to.deep.equal([])
    })

    it('throws a TypeError naming ajv\'s complaint for a schema ajv rejects', () => {
      const error = caught(() => jsonViolations({ type: 'strin' }, 1))
      expect(error).to.be.instanceOf(TypeError)
      expect((error as Error).message).to.match(/^invalid JSON schema: data\/type must be equal to one of the allowed values/)
    })

    it('throws a TypeError for an unresolvable $ref', () => {
      expect(() => jsonViolations({ $ref: '#/definitions/missing' }, 1)).to.throw(
        TypeError,
        "invalid JSON schema: can't resolve reference #/definitions/missing from id #",
      )
    })

    it('rejects an async schema instead of returning a promise', () => {
      expect(() => jsonViolations({ $async: true, type: 'object' }, {})).to.throw(
        TypeError,
        'invalid JSON schema: async schemas are not supported',
      )
    })
  })
})

describe('formatInvalidArguments', () => {
  it('joins violations after the pinned prefix', () => {
    expect(formatInvalidArguments(['value.a must be string', 'value must have required property "b"'])).to.equal(
      'invalid arguments: value.a must be string; value must have required property "b"',
    )
  })

  it('formats a single violation', () => {
    expect(formatInvalidArguments(['value must be object'])).to.equal('invalid arguments: value must be object')
  })

  it('lists the first 20 violations of a longer list, then counts the rest', () => {
    const violations = Array.from({ length: 25 }, (_, i) => `value[${i}] must be string`)
    const listed = violations.slice(0, 20).join('; ')
    expect(formatInvalidArguments(violations)).to.equal(`invalid arguments: ${listed}; … and 5 more`)
  })

  it('lists all of exactly 20 violations with no count of the rest', () => {
    const violations = Array.from({ length: 20 }, (_, i) => `value[${i}] must be string`)
    expect(formatInvalidArguments(violations)).to.equal(`invalid arguments: ${violations.join('; ')}`)
  })

  it('lists 20 of the violations of an array argument of 10,000 wrong items and counts the rest', () => {
    const schema = { type: 'object', properties: { items: { type: 'array', items: { type: 'string' } } } }
    const text = formatInvalidArguments(jsonViolations(schema, { items: new Array(10_000).fill(0) }))
    expect(text).to.equal(
      `invalid arguments: ${Array.from({ length: 20 }, (_, i) => `value.items[${i}] must be string`).join('; ')}; … and 9980 more`,
    )
  })
})
