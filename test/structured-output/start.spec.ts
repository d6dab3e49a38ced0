import { expect } from 'chai'
import sinon from 'sinon'
import { UnsupportedCapabilityError, UnsupportedSchemaError } from '../../lib/errors.ts'
import type { JsonSchema } from '../../lib/types.ts'
import { call, createFixture, type Fixture } from './fixture.ts'
import { rejectionOf } from '../support/scene.ts'

/** Starts with `outputSchema`, expects a rejection, and checks that no child was ever made. */
async function rejectedStart(fixture: Fixture, outputSchema: unknown): Promise<unknown> {
  const { root } = fixture.host
  const before = fixture.host.snapshot()
  const setup = sinon.spy()
  const created = sinon.spy()
  const offSetup = root.on('subagent/setup', setup)
  const offCreated = root.on('agent/created', created)
  const error = await rejectionOf(root.inprocessRun.spawn(fixture.request({ outputSchema: outputSchema as JsonSchema })))
  offSetup()
  offCreated()
  expect(setup.called, 'subagent/setup ran').to.equal(false)
  expect(created.called, 'a child was published').to.equal(false)
  expect(fixture.host.snapshot()).to.deep.equal(before)
  expect(fixture.host.scripted.requests).to.have.length(0)
  return error
}

describe('StructuredOutput at start (SPEC §2.1.6, §3)', () => {
  it('rejects a non-object root with the exact message and creates no child', async () => {
    const fixture = await createFixture()
    const error = await rejectedStart(fixture, { type: 'array', items: { type: 'string' } })
    expect(error).to.be.instanceOf(UnsupportedSchemaError)
    expect((error as UnsupportedSchemaError).code).to.equal('UNSUPPORTED_SCHEMA')
    expect((error as Error).message).to.equal('unsupported JSON schema: $: root type must be "object"')
  })

  it('lists every violation with its path', async () => {
    const fixture = await createFixture()
    const schema = {
      type: 'object',
      properties: { a: { type: 'string', format: 'email' }, b: { enum: [] } },
      required: ['a', 'c'],
      patternProperties: {},
    }
    const error = await rejectedStart(fixture, schema)
    expect((error as Error).message).to.equal(
      'unsupported JSON schema: $.required[1]: "c" is not a declared property; $: unknown keyword "patternProperties"; ' +
        '$.properties.a: unknown keyword "format"; $.properties.b: keyword "enum" needs a scalar type',
    )
  })

  it('rejects a value that is not a schema object', async () => {
    const fixture = await createFixture()
    const error = await rejectedStart(fixture, [])
    expect((error as Error).message).to.equal('unsupported JSON schema: $: must be a schema object')
  })

  it('rejects a oneOf with fewer than two branches', async () => {
    const fixture = await createFixture()
    const error = await rejectedStart(fixture, { type: 'object', properties: { x: { oneOf: [{ type: 'string' }] } } })
    expect((error as Error).message).to.equal('unsupported JSON schema: $.properties.x.oneOf: needs at least 2 branches')
  })

  it('rejects outputSchema when StructuredOutput is not loaded', async () => {
    const fixture = await createFixture({ plugin: false })
    const error = await rejectedStart(fixture, { type: 'object' })
    expect(error).to.be.instanceOf(UnsupportedCapabilityError)
    expect((error as UnsupportedCapabilityError).code).to.equal('UNSUPPORTED_CAPABILITY')
    expect((error as Error).message).to.equal('subagent runtime does not support the "outputSchema" capability')
  })

  it('accepts the whole subset and validates a capture against it end to end', async () => {
    const fixture = await createFixture()
    const schema = {
      type: 'object',
      title: 'report',
      description: 'what the child found',
      properties: {
        verdict: { type: 'string', enum: ['pass', 'fail'] },
        version: { type: 'integer', const: 2 },
        score: { type: 'number', default: 0, examples: [0.5] },
        tags: { type: 'array', items: { type: 'string' } },
        detail: { oneOf: [{ type: 'string' }, { type: 'null' }] },
        note: { description: 'anything' },
        flag: { type: 'boolean' },
      },
      required: ['verdict', 'version', 'detail'],
      additionalProperties: false,
    }
    const value = { verdict: 'pass', version: 2, score: 0.9, tags: ['a'], detail: null, note: [1, { x: 'y' }], flag: true }
    fixture.host.scripted.push(
      { toolCalls: [call('structured_output', { ...value, verdict: 'maybe', detail: 3 })] },
      { toolCalls: [call('structured_output', value)] },
    )
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request({ outputSchema: schema }))
    const result = await run.result
    expect(result.stopReason).to.equal('completed')
    expect(result.structured).to.deep.equal(value)
    const first = run.agent.session.events.find((event) => event.type === 'tool/result')?.data as { content: unknown }
    expect(first.content).to.deep.equal([
      {
        type: 'text',
        text:
          'Error: invalid arguments: value.verdict must be equal to one of: "pass", "fail"; value.detail must be string; ' +
          'value.detail must be null; value.detail must match exactly one schema in oneOf',
      },
    ])
    await run.dispose()
  })
})
