import { expect } from 'chai'
import { SubagentError, UnsupportedSchemaError } from '../../../lib/errors.ts'
import { assertSchemaSubset, MAX_SCHEMA_DEPTH, schemaViolations } from '../../../lib/schema/schema-subset.ts'

type Dict = Record<string, unknown>

/** Wraps a node as the only property of a valid root, so a test can focus on that node. */
function root(node: unknown): Dict {
  return { type: 'object', properties: { a: node } }
}

/** `depth` levels of object nodes in total (the root is level 1), built without recursion. */
function nestedObjects(depth: number): Dict {
  let node: Dict = { type: 'object' }
  for (let level = 1; level < depth; level++) node = { type: 'object', properties: { a: node } }
  return node
}

/** `[1, <hole>, 3]`: index 1 is absent, not `undefined`. */
function withHole(): unknown[] {
  const array = new Array<unknown>(3)
  array[0] = 1
  array[2] = 3
  return array
}

describe('schemaViolations', () => {
  describe('accepted forms', () => {
    const accepted: [string, unknown][] = [
      ['a bare object root', { type: 'object' }],
      ['an object with properties, required and closed additionalProperties', {
        type: 'object',
        properties: { answer: { type: 'integer' }, note: { type: 'string' } },
        required: ['answer'],
        additionalProperties: false,
      }],
      ['open additionalProperties', { type: 'object', additionalProperties: true }],
      ['an empty required list', { type: 'object', properties: {}, required: [] }],
      ['an array with items', root({ type: 'array', items: { type: 'number' } })],
      ['an array without items', root({ type: 'array' })],
      ['a string enum', root({ type: 'string', enum: ['a', 'b'] })],
      ['a number enum with fractions', root({ type: 'number', enum: [1.5, -2, 0] })],
      ['an integer enum written as 1.0', root({ type: 'integer', enum: [1.0, 2] })],
      ['a boolean const', root({ type: 'boolean', const: true })],
      ['a null enum and const together', root({ type: 'null', enum: [null], const: null })],
      ['a oneOf node with two branches', root({ oneOf: [{ type: 'string' }, { type: 'null' }] })],
      ['a oneOf node with annotations', root({ title: 't', oneOf: [{}, { type: 'integer' }] })],
      ['an empty annotation-only node', root({})],
      ['an annotation-only node with every annotation', root({
        title: 'anything',
        description: 'any JSON value',
        default: { nested: [1, 'two', null] },
        examples: [1, 'x', [], {}],
      })],
      ['annotations on the root', { type: 'object', title: 'r', description: 'd', default: {}, examples: [{}] }],
      ['property names that shadow Object.prototype members', {
        type: 'object',
        properties: JSON.parse('{"__proto__": {"type": "string"}, "constructor": {}, "toString": {}}'),
        required: ['__proto__', 'constructor'],
      }],
      ['a null-prototype node', Object.assign(Object.create(null), { type: 'object' })],
    ]
    for (const [title, schema] of accepted) {
      it(`accepts ${title}`, () => {
        expect(schemaViolations(schema)).to.deep.equal([])
      })
    }
  })

  describe('root', () => {
    const nonObjects: [string, unknown][] = [
      ['a number', 42],
      ['null', null],
      ['undefined', undefined],
      ['an array', [{ type: 'object' }]],
      ['a string', 'object'],
      ['a function', () => ({ type: 'object' })],
      ['a class instance', new (class Schema {
        type = 'object'
      })()],
    ]
    for (const [title, schema] of nonObjects) {
      it(`rejects ${title} as the root`, () => {
        expect(schemaViolations(schema)).to.deep.equal(['$: must be a schema object'])
      })
    }

    it('rejects a root of another type', () => {
      expect(schemaViolations({ type: 'string' })).to.deep.equal(['$: root type must be "object"'])
    })

    it('rejects a root without a type', () => {
      expect(schemaViolations({ title: 'x' })).to.deep.equal(['$: root type must be "object"'])
    })

    it('rejects a oneOf root', () => {
      expect(schemaViolations({ oneOf: [{ type: 'object' }, { type: 'object' }] })).to.deep.equal([
        '$: root type must be "object"',
      ])
    })

    it('reports only the type violation for a root type array', () => {
      expect(schemaViolations({ type: ['object', 'null'] })).to.deep.equal(['$.type: must be a single type, not an array'])
    })
  })

  describe('rejected forms', () => {
    const rejected: [string, unknown, string[]][] = [
      ['an unknown keyword', root({ type: 'string', pattern: '^a' }), ['$.properties.a: unknown keyword "pattern"']],
      ['$ref', root({ $ref: '#/x' }), ['$.properties.a: unknown keyword "$ref"']],
      ['minimum', root({ type: 'number', minimum: 0 }), ['$.properties.a: unknown keyword "minimum"']],
      ['anyOf', root({ anyOf: [{}, {}] }), ['$.properties.a: unknown keyword "anyOf"']],
      ['allOf', root({ allOf: [{}, {}] }), ['$.properties.a: unknown keyword "allOf"']],
      ['a keyword named __proto__', root(JSON.parse('{"__proto__": {}}')), ['$.properties.a: unknown keyword "__proto__"']],
      ['a type array', root({ type: ['string', 'null'] }), ['$.properties.a.type: must be a single type, not an array']],
      ['an unknown type name', root({ type: 'date' }), ['$.properties.a.type: unknown type "date"']],
      ['a non-string type', root({ type: 1 }), ['$.properties.a.type: must be a type name']],
      ['items on a string', root({ type: 'string', items: {} }), [
        '$.properties.a: keyword "items" is not allowed with type "string"',
      ]],
      ['properties on an array', root({ type: 'array', properties: {} }), [
        '$.properties.a: keyword "properties" is not allowed with type "array"',
      ]],
      ['enum on an object', root({ type: 'object', enum: [{}] }), [
        '$.properties.a: keyword "enum" is not allowed with type "object"',
      ]],
      ['const on an array', root({ type: 'array', const: [] }), [
        '$.properties.a: keyword "const" is not allowed with type "array"',
      ]],
      ['enum without a type', root({ enum: ['a'] }), ['$.properties.a: keyword "enum" needs a scalar type']],
      ['properties without a type', root({ properties: {} }), ['$.properties.a: keyword "properties" needs type "object"']],
      ['items without a type', root({ items: {} }), ['$.properties.a: keyword "items" needs type "array"']],
      ['an empty enum', root({ type: 'string', enum: [] }), ['$.properties.a.enum: must be a non-empty array']],
      ['a non-array enum', root({ type: 'string', enum: 'a' }), ['$.properties.a.enum: must be a non-empty array']],
      ['a string enum holding a number', root({ type: 'string', enum: ['a', 1] }), [
        '$.properties.a.enum[1]: must be a string',
      ]],
      ['an integer enum holding a fraction', root({ type: 'integer', enum: [1, 1.5] }), [
        '$.properties.a.enum[1]: must be an integer',
      ]],
      ['a number enum holding NaN', root({ type: 'number', enum: [Number.NaN] }), [
        '$.properties.a.enum[0]: must be a finite number',
      ]],
      ['a repeated enum value', root({ type: 'string', enum: ['a', 'b', 'a'] }), ['$.properties.a.enum[2]: duplicate value']],
      ['zero and negative zero in one enum', root({ type: 'number', enum: [0, -0] }), [
        '$.properties.a.enum[1]: duplicate value',
      ]],
      ['a boolean const holding a string', root({ type: 'boolean', const: 'true' }), [
        '$.properties.a.const: must be a boolean',
      ]],
      ['a null const holding false', root({ type: 'null', const: false }), ['$.properties.a.const: must be null']],
      ['a oneOf with one branch', root({ oneOf: [{}] }), ['$.properties.a.oneOf: needs at least 2 branches']],
      ['a oneOf with no branches', root({ oneOf: [] }), ['$.properties.a.oneOf: needs at least 2 branches']],
      ['a non-array oneOf', root({ oneOf: {} }), ['$.properties.a.oneOf: must be an array']],
      ['a oneOf together with type', root({ type: 'string', oneOf: [{}, {}] }), [
        '$.properties.a: keyword "oneOf" is not allowed with "type"',
      ]],
      ['a typed keyword beside oneOf', root({ oneOf: [{}, {}], enum: [1] }), [
        '$.properties.a: keyword "enum" is not allowed with "oneOf"',
      ]],
      ['a non-schema oneOf branch', root({ oneOf: [{}, true] }), ['$.properties.a.oneOf[1]: must be a schema object']],
      ['a boolean schema as items', root({ type: 'array', items: true }), ['$.properties.a.items: must be a schema object']],
      ['tuple items', root({ type: 'array', items: [{}] }), ['$.properties.a.items: must be a schema object']],
      ['non-object properties', { type: 'object', properties: [] }, ['$.properties: must be an object']],
      ['a non-boolean additionalProperties', { type: 'object', additionalProperties: {} }, [
        '$.additionalProperties: must be a boolean',
      ]],
      ['required naming an undeclared property', { type: 'object', properties: { a: {} }, required: ['x'] }, [
        '$.required[0]: "x" is not a declared property',
      ]],
      ['required without properties', { type: 'object', required: ['a'] }, ['$.required[0]: "a" is not a declared property']],
      ['required naming an inherited member', { type: 'object', properties: {}, required: ['constructor'] }, [
        '$.required[0]: "constructor" is not a declared property',
      ]],
      ['a duplicate required name', { type: 'object', properties: { a: {} }, required: ['a', 'a'] }, [
        '$.required[1]: duplicate "a"',
      ]],
      ['a non-string required entry', { type: 'object', required: [1] }, ['$.required[0]: must be a string']],
      ['a non-array required', { type: 'object', required: 'a' }, ['$.required: must be an array']],
      ['a non-string title', root({ title: 1 }), ['$.properties.a.title: must be a string']],
      ['a non-string description', root({ description: null }), ['$.properties.a.description: must be a string']],
      ['non-array examples', root({ examples: 'x' }), ['$.properties.a.examples: must be an array of JSON data']],
      ['a property name that is not an identifier', { type: 'object', properties: { 'a b': { type: 'x' } } }, [
        '$.properties["a b"].type: unknown type "x"',
      ]],
      ['a deep violation', root({ type: 'array', items: { oneOf: [{}, { type: 'string', format: 'email' }] } }), [
        '$.properties.a.items.oneOf[1]: unknown keyword "format"',
      ]],
    ]
    for (const [title, schema, violations] of rejected) {
      it(`rejects ${title}`, () => {
        expect(schemaViolations(schema)).to.deep.equal(violations)
      })
    }
  })

  describe('JSON data in annotations, enum and const', () => {
    const nonJson: [string, unknown][] = [
      ['a function', () => 1],
      ['undefined', undefined],
      ['a symbol', Symbol('s')],
      ['a bigint', 1n],
      ['Infinity', Number.POSITIVE_INFINITY],
      ['a Date', new Date(0)],
      ['a nested function', { a: [1, () => 1] }],
      ['a sparse array', withHole()],
    ]
    for (const [title, value] of nonJson) {
      it(`rejects ${title} as a default`, () => {
        expect(schemaViolations(root({ default: value }))).to.deep.equal(['$.properties.a.default: must be JSON data'])
      })
    }

    it('rejects a cyclic default', () => {
      const cycle: Dict = { a: 1 }
      cycle.self = { back: cycle }
      expect(schemaViolations({ type: 'object', default: cycle })).to.deep.equal(['$.default: must be JSON data'])
    })

    it('accepts a default that shares one subtree twice', () => {
      const shared = { x: [1, 2] }
      expect(schemaViolations({ type: 'object', default: { a: shared, b: shared } })).to.deep.equal([])
    })

    it('names the example that is not JSON data', () => {
      expect(schemaViolations(root({ examples: [1, () => 2, undefined] }))).to.deep.equal([
        '$.properties.a.examples[1]: must be JSON data',
        '$.properties.a.examples[2]: must be JSON data',
      ])
    })

    it('rejects examples that contain themselves', () => {
      const examples: unknown[] = [1]
      examples.push(examples)
      expect(schemaViolations({ type: 'object', examples })).to.deep.equal(['$.examples[1]: must be JSON data'])
    })

    it('rejects a non-JSON enum value when the type is invalid', () => {
      expect(schemaViolations(root({ type: 'text', enum: [undefined] }))).to.deep.equal([
        '$.properties.a.type: unknown type "text"',
        '$.properties.a.enum[0]: must be JSON data',
      ])
    })

    it('ignores symbol-keyed and non-enumerable members', () => {
      const node = root({ type: 'string' })
      Object.defineProperty(node, 'pattern', { value: 'x', enumerable: false })
      Object.assign(node, { [Symbol('pattern')]: 'x' })
      expect(schemaViolations(node)).to.deep.equal([])
    })
  })

  describe('several violations', () => {
    it('lists every violation with its own path, parent before children', () => {
      const schema = {
        type: 'object',
        properties: {
          answer: { type: 'integer', enum: [] },
          tags: { type: 'array', items: { type: 'string', minLength: 1 } },
          kind: { oneOf: [{ type: 'string' }] },
        },
        required: ['answer', 'missing'],
        additionalProperties: 'no',
        $schema: 'https://json-schema.org/draft/2020-12/schema',
      }
      expect(schemaViolations(schema)).to.deep.equal([
        '$.required[1]: "missing" is not a declared property',
        '$.additionalProperties: must be a boolean',
        '$: unknown keyword "$schema"',
        '$.properties.answer.enum: must be a non-empty array',
        '$.properties.tags.items: unknown keyword "minLength"',
        '$.properties.kind.oneOf: needs at least 2 branches',
      ])
    })
  })

  describe('cycles, depth and size', () => {
    it('reports a schema that contains itself instead of looping', () => {
      const schema: Dict = { type: 'object' }
      schema.properties = { self: schema }
      expect(schemaViolations(schema)).to.deep.equal(['$.properties.self: circular reference'])
    })

    it('accepts a subtree shared by two properties', () => {
      const shared = { type: 'string' }
      expect(schemaViolations({ type: 'object', properties: { a: shared, b: shared } })).to.deep.equal([])
    })

    it(`accepts exactly ${MAX_SCHEMA_DEPTH} levels of nesting`, () => {
      expect(schemaViolations(nestedObjects(MAX_SCHEMA_DEPTH))).to.deep.equal([])
    })

    it(`reports the node at level ${MAX_SCHEMA_DEPTH + 1}`, () => {
      const path = `$${'.properties.a'.repeat(MAX_SCHEMA_DEPTH)}`
      expect(schemaViolations(nestedObjects(MAX_SCHEMA_DEPTH + 1))).to.deep.equal([
        `${path}: nesting deeper than 64 levels`,
      ])
    })

    it('returns one violation for 10,000 levels of nesting instead of throwing', () => {
      const violations = schemaViolations(nestedObjects(10_000))
      expect(violations).to.have.length(1)
      expect(violations[0]).to.match(/^\$(\.properties\.a){64}: nesting deeper than 64 levels$/)
    })

    it('returns one violation for 10,000 levels of array items', () => {
      let node: Dict = { type: 'string' }
      for (let i = 0; i < 10_000; i++) node = { type: 'array', items: node }
      expect(schemaViolations(root(node))).to.have.length(1)
    })

    it('reports a default nested 10,000 levels deep', () => {
      let value: unknown = 1
      for (let i = 0; i < 10_000; i++) value = [value]
      expect(schemaViolations({ type: 'object', default: value })).to.deep.equal([
        '$.default: nesting deeper than 64 levels',
      ])
    })

    it('accepts a schema with 5,000 properties', () => {
      const properties: Dict = {}
      for (let i = 0; i < 5_000; i++) properties[`p${i}`] = { type: 'string', description: `field ${i}` }
      expect(schemaViolations({ type: 'object', properties, required: Object.keys(properties) })).to.deep.equal([])
    })

    it('stops at the size cap when shared subtrees multiply the paths', () => {
      let node: Dict = { type: 'string' }
      for (let i = 0; i < 40; i++) node = { type: 'object', properties: { a: node, b: node } }
      expect(schemaViolations(node)).to.deep.equal(['$: schema is larger than 200000 values'])
    })

    it('reports a node whose proxy throws instead of throwing', () => {
      const hostile = new Proxy(
        {},
        {
          ownKeys() {
            throw new Error('boom')
          },
        },
      )
      expect(schemaViolations(root(hostile))).to.deep.equal(['$.properties.a: could not be read'])
    })

    it('reports a default whose getter throws instead of throwing', () => {
      const value = {
        get x(): number {
          throw new Error('boom')
        },
      }
      expect(schemaViolations({ type: 'object', default: value })).to.deep.equal(['$.default: could not be read'])
    })
  })

  describe('prototype safety', () => {
    it('does not touch Object.prototype while checking __proto__ names', () => {
      const schema = JSON.parse(
        '{"type":"object","properties":{"__proto__":{"type":"object","properties":{"polluted":{}}}},"required":["__proto__"]}',
      )
      expect(schemaViolations(schema)).to.deep.equal([])
      expect(Object.hasOwn(Object.prototype, 'polluted')).to.equal(false)
    })
  })
})

describe('assertSchemaSubset', () => {
  it('returns for a supported schema', () => {
    expect(() => assertSchemaSubset({ type: 'object', properties: { a: { type: 'string' } } })).not.to.throw()
  })

  it('throws UnsupportedSchemaError listing every violation', () => {
    const schema = { type: 'object', properties: { a: { type: 'string', pattern: 'x' } }, required: ['b'] }
    let caught: unknown
    try {
      assertSchemaSubset(schema)
    } catch (error) {
      caught = error
    }
    expect(caught).to.be.instanceOf(UnsupportedSchemaError)
    const error = caught as UnsupportedSchemaError
    expect(error.message).to.equal(
      'unsupported JSON schema: $.required[0]: "b" is not a declared property; $.properties.a: unknown keyword "pattern"',
    )
    expect(error.code).to.equal('UNSUPPORTED_SCHEMA')
    expect(error.violations).to.deep.equal([
      '$.required[0]: "b" is not a declared property',
      '$.properties.a: unknown keyword "pattern"',
    ])
    expect(SubagentError.is(error)).to.equal(true)
  })

  it('throws for a non-object root', () => {
    expect(() => assertSchemaSubset('object')).to.throw(UnsupportedSchemaError, 'unsupported JSON schema: $: must be a schema object')
  })
})
