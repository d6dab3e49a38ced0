import { expect } from 'chai'
import Schema from 'schemastery'
import { UnsupportedSchemaError } from '../../lib/errors.ts'
import type { ToolSchema } from '../../lib/types.ts'
import { call, createFixture, toolResults } from './fixture.ts'

const answer = Schema.object({ answer: Schema.number().step(1), unit: Schema.union(['m', 'km']) })

describe('StructuredOutput with a schemastery outputSchema', () => {
  it('offers the converted schema to the child and commits a matching value', async () => {
    const fixture = await createFixture()
    fixture.host.scripted.push({ toolCalls: [call('structured_output', { answer: 42, unit: 'km' })] })
    const run = await fixture.host.root.inprocessRun.spawn({ ...fixture.request(), outputSchema: answer })
    const result = await run.result
    expect(result.stopReason).to.equal('completed')
    expect(result.structured).to.deep.equal({ answer: 42, unit: 'km' })
    const offered = fixture.host.scripted.requests[0]?.tools?.find((tool: ToolSchema) => tool.name === 'structured_output')
    expect(offered?.parameters).to.deep.equal({
      type: 'object',
      properties: { answer: { type: 'integer' }, unit: { type: 'string', enum: ['m', 'km'] } },
      required: ['answer', 'unit'],
    })
    await run.dispose()
  })

  it('refuses a value that misses a property of the schemastery schema', async () => {
    const fixture = await createFixture()
    fixture.host.scripted.push(
      { toolCalls: [call('structured_output', { answer: 1 })] },
      { toolCalls: [call('structured_output', { answer: 1, unit: 'm' })] },
    )
    const run = await fixture.host.root.inprocessRun.spawn({ ...fixture.request(), outputSchema: answer })
    const result = await run.result
    expect(toolResults(run.agent)[0]?.isError).to.equal(true)
    expect(result.structured).to.deep.equal({ answer: 1, unit: 'm' })
    await run.dispose()
  })

  it('rejects the start naming what the subset cannot express, before any child exists', async () => {
    const fixture = await createFixture()
    const created: unknown[] = []
    const off = fixture.host.root.on('agent/created', (agent: unknown) => created.push(agent))
    const outputSchema = Schema.object({ when: Schema.natural(), map: Schema.dict(Schema.string()) })
    const start = fixture.host.root.inprocessRun.spawn({ ...fixture.request(), outputSchema })
    const error = await start.then(
      () => undefined,
      (reason: unknown) => reason,
    )
    off()
    expect(error).to.be.instanceOf(UnsupportedSchemaError)
    expect((error as Error).message).to.equal(
      'unsupported JSON schema: $.properties.when: schemastery "min" has no equivalent in the subset; ' +
        '$.properties.map: schemastery "dict" has no equivalent in the subset',
    )
    expect(created).to.deep.equal([])
    expect(fixture.host.scripted.requests).to.have.length(0)
  })
})
