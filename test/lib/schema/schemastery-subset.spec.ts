import { expect } from 'chai'
import Schema from 'schemastery'
import { UnsupportedSchemaError } from '../../../lib/errors.ts'
import { schemaViolations } from '../../../lib/schema/schema-subset.ts'
import { isSchemastery, requestedJsonSchema, subsetOfSchemastery } from '../../../lib/schema/schemastery-subset.ts'

function violationsOf(schema: Schema): string {
  try {
    subsetOfSchemastery(schema)
  } catch (error) {
    expect(error).to.be.instanceOf(UnsupportedSchemaError)
    expect((error as UnsupportedSchemaError).code).to.equal('UNSUPPORTED_SCHEMA')
    return (error as Error).message
  }
  throw new Error('expected the conversion to throw')
}

describe('subsetOfSchemastery', () => {
  it('converts scalars, arrays and nested objects, requiring every property', () => {
    const schema = Schema.object({
      name: Schema.string().description('who'),
      count: Schema.number(),
      whole: Schema.number().step(1).default(2),
      done: Schema.boolean(),
      tags: Schema.array(Schema.string()),
      inner: Schema.object({ note: Schema.any() }),
    })
    expect(subsetOfSchemastery(schema)).to.deep.equal({
      type: 'object',
      properties: {
        name: { type: 'string', description: 'who' },
        count: { type: 'number' },
        whole: { type: 'integer', default: 2 },
        done: { type: 'boolean' },
        tags: { type: 'array', items: { type: 'string' } },
        inner: { type: 'object', properties: { note: {} }, required: ['note'] },
      },
      required: ['name', 'count', 'whole', 'done', 'tags', 'inner'],
    })
  })

  it('turns a union of string constants into an enum and a mixed union into oneOf', () => {
    const schema = Schema.object({
      unit: Schema.union(['m', 'km']),
      value: Schema.union([Schema.const(null), Schema.number(), Schema.const('none')]),
      kind: Schema.const(true),
    })
    expect(subsetOfSchemastery(schema).properties).to.deep.equal({
      unit: { type: 'string', enum: ['m', 'km'] },
      value: { oneOf: [{ type: 'null' }, { type: 'number' }, { type: 'string', const: 'none' }] },
      kind: { type: 'boolean', const: true },
    })
  })

  it('produces a schema inside the JSON-Schema subset', () => {
    const schema = Schema.object({ a: Schema.union([Schema.string(), Schema.array(Schema.number())]), b: Schema.union(['x', 'y']) })
    expect(schemaViolations(subsetOfSchemastery(schema))).to.deep.equal([])
  })

  it('drops presentation-only meta and the implicit empty defaults of objects and arrays', () => {
    const schema = Schema.object({ list: Schema.array(Schema.string()).hidden().collapse().deprecated() })
    expect(subsetOfSchemastery(schema)).to.deep.equal({
      type: 'object',
      properties: { list: { type: 'array', items: { type: 'string' } } },
      required: ['list'],
    })
  })

  it('rejects every construct the subset cannot express, naming each with its path', () => {
    const schema = Schema.object({
      size: Schema.natural(),
      map: Schema.dict(Schema.string()),
      'odd key': Schema.string().pattern(/^a/),
      pair: Schema.tuple([Schema.string(), Schema.number()]),
      half: Schema.number().step(0.5),
      both: Schema.intersect([Schema.object({ a: Schema.string() }), Schema.object({ b: Schema.string() })]),
    })
    expect(violationsOf(schema)).to.equal(
      'unsupported JSON schema: $.properties.size: schemastery "min" has no equivalent in the subset; ' +
        '$.properties.map: schemastery "dict" has no equivalent in the subset; ' +
        '$.properties["odd key"]: schemastery "pattern" has no equivalent in the subset; ' +
        '$.properties.pair: schemastery "tuple" has no equivalent in the subset; ' +
        '$.properties.half: schemastery "step" 0.5 has no equivalent in the subset; ' +
        '$.properties.both: schemastery "intersect" has no equivalent in the subset',
    )
  })

  it('rejects a constant that is not a scalar', () => {
    expect(violationsOf(Schema.object({ fixed: Schema.const({ a: 1 }) }))).to.equal(
      'unsupported JSON schema: $.properties.fixed: schemastery "const" of a non-scalar value has no equivalent in the subset',
    )
  })

  it('returns the same converted object for the same schema', () => {
    const schema = Schema.object({ a: Schema.string() })
    expect(subsetOfSchemastery(schema)).to.equal(subsetOfSchemastery(schema))
  })
})

describe('requestedJsonSchema', () => {
  it('converts a schemastery schema and passes anything else through unchanged', () => {
    const json = { type: 'object' }
    expect(requestedJsonSchema(json)).to.equal(json)
    expect(requestedJsonSchema(Schema.object({}))).to.deep.equal({ type: 'object' })
    expect(isSchemastery(() => {})).to.equal(false)
    expect(isSchemastery(Schema.string())).to.equal(true)
  })
})
