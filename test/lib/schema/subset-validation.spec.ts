import Ajv from 'ajv'
import { expect } from 'chai'
import sinon from 'sinon'
import { jsonViolations } from '../../../lib/schema/json-validation.ts'
import { compileSubset } from '../../../lib/schema/subset-validation.ts'

/** An object schema with `count` string properties named `field_<i>`. */
function wide(count: number): { type: 'object'; properties: Record<string, { type: 'string' }> } {
  const properties: Record<string, { type: 'string' }> = {}
  for (let i = 0; i < count; i++) properties[`field_${i}`] = { type: 'string' }
  return { type: 'object', properties }
}

describe('subset validation (large schemas)', () => {
  afterEach(() => {
    sinon.restore()
  })

  it('validates a schema inside the subset without compiling it with ajv', () => {
    const compile = sinon.spy(Ajv.prototype, 'compile')
    expect(jsonViolations(wide(2_000), { field_1999: 5 })).to.deep.equal(['value.field_1999 must be string'])
    expect(compile.callCount).to.equal(0)
  })

  it('still compiles a schema outside the subset with ajv', () => {
    const compile = sinon.spy(Ajv.prototype, 'compile')
    expect(jsonViolations({ type: 'string', minLength: 2 }, 'a')).to.deep.equal(['value must NOT have fewer than 2 characters'])
    expect(compile.callCount).to.equal(1)
  })

  it('validates a value against a 60,000-property schema', () => {
    const validate = compileSubset(wide(60_000))
    expect(validate({ field_0: 'a', field_59999: true })).to.deep.equal(['value.field_59999 must be string'])
  })

  it('stops at the second passing oneOf branch, as ajv does', () => {
    const validate = compileSubset({
      type: 'object',
      properties: { choice: { oneOf: [{ type: 'array' }, {}, { type: 'string' }] } },
    })
    expect(validate({ choice: [] })).to.deep.equal(['value.choice must match exactly one schema in oneOf'])
  })

  it('reports a scalar type before its const and enum', () => {
    const validate = compileSubset({ type: 'object', properties: { mode: { type: 'string', const: 'a', enum: ['a', 'b'] } } })
    expect(validate({ mode: 1 })).to.deep.equal([
      'value.mode must be string',
      'value.mode must be equal to constant "a"',
      'value.mode must be equal to one of: "a", "b"',
    ])
  })

  it('honours a declared __proto__ property', () => {
    const properties = JSON.parse('{"__proto__": {"type": "string"}}')
    const validate = compileSubset({ type: 'object', properties, additionalProperties: false })
    expect(validate(JSON.parse('{"__proto__": 1}'))).to.deep.equal(['value.__proto__ must be string'])
    expect(validate(JSON.parse('{"__proto__": "x"}'))).to.deep.equal([])
  })

  it('does not report an inherited enumerable key as an additional property', () => {
    const validate = compileSubset({ type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false })
    const value = Object.assign(Object.create({ inherited: 1 }), { a: 'x' })
    expect(validate(value)).to.deep.equal([])
  })

  it('names a failing scalar at every level by its full path', () => {
    const validate = compileSubset({
      type: 'object',
      properties: { 'a b': { type: 'object', properties: { list: { type: 'array', items: { type: 'integer', enum: [1, 2] } } } } },
    })
    expect(validate({ 'a b': { list: [1, 'x'] } })).to.deep.equal([
      'value["a b"].list[1] must be integer',
      'value["a b"].list[1] must be equal to one of: 1, 2',
    ])
  })

  it('reports a violation two oneOf branches share once', () => {
    const schema = { type: 'object', properties: { v: { oneOf: [{ type: 'string', const: 'a' }, { type: 'string', enum: ['b'] }] } } }
    expect(jsonViolations(schema, { v: 1 })).to.deep.equal([
      'value.v must be string',
      'value.v must be equal to constant "a"',
      'value.v must be equal to one of: "b"',
      'value.v must match exactly one schema in oneOf',
    ])
  })

  it('compiles a shared subtree once and validates it at every place it is used', () => {
    const shared = { type: 'integer' }
    const validate = compileSubset({ type: 'object', properties: { a: shared, b: { type: 'array', items: shared } } })
    expect(validate({ a: 1.5, b: [1, 'x'] })).to.deep.equal(['value.a must be integer', 'value.b[1] must be integer'])
  })
})
