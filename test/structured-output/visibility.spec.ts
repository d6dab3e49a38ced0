import { isDeepStrictEqual } from 'node:util'
import { expect } from 'chai'
import type { ModelRequest, ToolSchema } from '../../lib/types.ts'
import {
  STRUCTURED_OUTPUT_DESCRIPTION,
  STRUCTURED_OUTPUT_INSTRUCTION,
  STRUCTURED_OUTPUT_ORDER,
  STRUCTURED_OUTPUT_SECTION,
} from '../../plugins/structured-output/index.ts'
import { scopeOf } from '../../plugins/host/scope.ts'
import { call, createFixture } from './fixture.ts'

const nameSchema = {
  type: 'object',
  properties: { name: { type: 'string' } },
  required: ['name'],
  additionalProperties: false,
}
const countSchema = {
  type: 'object',
  properties: { count: { type: 'integer' } },
  required: ['count'],
  additionalProperties: false,
}

function captureSchemas(request: ModelRequest): readonly ToolSchema[] {
  return (request.tools ?? []).filter((tool) => tool.name === 'structured_output')
}

/** Answers each child with a capture that fits the schema it was shown. */
function answerBySchema(request: ModelRequest) {
  const [schema] = captureSchemas(request)
  return { toolCalls: [call('structured_output', isDeepStrictEqual(schema?.parameters, nameSchema) ? { name: 'ada' } : { count: 3 })] }
}

const unknownTool = {
  isError: true,
  content: [{ type: 'text', text: 'Error: unknown tool "structured_output"' }],
  code: 'UNKNOWN_TOOL',
}

describe('StructuredOutput visibility (SPEC §3)', () => {
  it('shows concurrent children only their own schema', async () => {
    const fixture = await createFixture()
    fixture.host.scripted.push(answerBySchema, answerBySchema)
    const runner = fixture.host.root.inprocessRun
    const first = await runner.spawn(fixture.request({ outputSchema: nameSchema }))
    const second = await runner.spawn(fixture.request({ outputSchema: countSchema }))
    const [a, b] = await Promise.all([first.result, second.result])
    expect(a.structured).to.deep.equal({ name: 'ada' })
    expect(b.structured).to.deep.equal({ count: 3 })
    const requests = fixture.host.scripted.requests
    expect(requests).to.have.length(2)
    const byAgent = new Map(requests.map((request) => [request.agent, captureSchemas(request)]))
    expect(byAgent.get(first.agent)).to.deep.equal([
      { name: 'structured_output', description: STRUCTURED_OUTPUT_DESCRIPTION, parameters: nameSchema },
    ])
    expect(byAgent.get(second.agent)).to.deep.equal([
      { name: 'structured_output', description: STRUCTURED_OUTPUT_DESCRIPTION, parameters: countSchema },
    ])
    await Promise.all([first.dispose(), second.dispose()])
  })

  it("commits through its own tool when the child inherits a parent's guard that allows only another tool", async () => {
    const fixture = await createFixture()
    const { host } = fixture
    fixture.parent.ctx.tools.guard((exec) => (exec.name === 'read' ? undefined : 'only read'))
    host.scripted.push({ toolCalls: [call('structured_output', { answer: 42 })] })
    const run = await host.root.inprocessRun.spawn(fixture.request({ inheritRestrictions: true }))
    const result = await run.result
    expect([result.stopReason, result.structured]).to.deep.equal(['completed', { answer: 42 }])
    await run.dispose()
  })

  it('hides the tool from the parent, a sibling and a tool-less caller', async () => {
    const fixture = await createFixture()
    const { root } = fixture.host
    fixture.host.scripted.push('hang', 'hang')
    const child = await root.inprocessRun.spawn(fixture.request())
    const sibling = await root.inprocessRun.spawn(fixture.request({ outputSchema: undefined }))
    expect(root.tools.get('structured_output', child.agent)?.parameters).to.deep.equal(fixture.request().outputSchema)
    for (const agent of [fixture.parent, sibling.agent, undefined]) {
      expect(root.tools.get('structured_output', agent)).to.equal(undefined)
      expect(root.tools.schemas(agent).map((tool) => tool.name)).to.not.include('structured_output')
      const result = await root.tools.execute({ name: 'structured_output', arguments: { answer: 1 }, ...(agent ? { agent } : {}) })
      expect(result).to.deep.equal(unknownTool)
    }
    const siblingRequest = fixture.host.scripted.requests.find((request) => request.agent === sibling.agent)
    expect(siblingRequest).to.not.have.property('tools')
    expect(siblingRequest?.system).to.not.include(STRUCTURED_OUTPUT_INSTRUCTION)
    await Promise.all([child.dispose(), sibling.dispose()])
  })

  it('hides the tool from a structured sibling, which sees its own', async () => {
    const fixture = await createFixture()
    const { root } = fixture.host
    fixture.host.scripted.push('hang', 'hang')
    const first = await root.inprocessRun.spawn(fixture.request({ outputSchema: nameSchema }))
    const second = await root.inprocessRun.spawn(fixture.request({ outputSchema: countSchema }))
    const result = await root.tools.execute({ name: 'structured_output', arguments: { name: 'ada' }, agent: second.agent })
    expect(result.content).to.deep.equal([
      { type: 'text', text: 'Error: invalid arguments: value must have required property "count"; value must NOT have additional property "name"' },
    ])
    await Promise.all([first.dispose(), second.dispose()])
  })

  it('renders the instruction after lower-ordered sections and before higher ones', async () => {
    const fixture = await createFixture()
    const { root } = fixture.host
    const offLate = root.systemPrompt.section({ name: 'late', order: 200, text: 'late guidance' })
    const offEarly = root.systemPrompt.section({ name: 'tool:early', order: 150, text: 'early tool guidance' })
    fixture.host.scripted.push({ toolCalls: [call('structured_output', { answer: 1 })] })
    const run = await root.inprocessRun.spawn(fixture.request({ persona: 'You are a careful child.' }))
    await run.result
    offLate()
    offEarly()
    expect(fixture.host.scripted.requests[0]!.system).to.equal(
      ['You are a careful child.', 'early tool guidance', STRUCTURED_OUTPUT_INSTRUCTION, 'late guidance'].join('\n\n'),
    )
    await run.dispose()
  })

  it('contributes section "tool:structured_output" at order 190 through system-prompt/assemble', async () => {
    const fixture = await createFixture()
    fixture.host.scripted.push('hang')
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
    const sections = fixture.host.root.systemPrompt.assemble(run.agent).sections
    expect(sections).to.deep.include({ name: 'tool:structured_output', order: 190, text: STRUCTURED_OUTPUT_INSTRUCTION })
    expect([STRUCTURED_OUTPUT_SECTION, STRUCTURED_OUTPUT_ORDER]).to.deep.equal(['tool:structured_output', 190])
    expect(fixture.host.root.systemPrompt.assemble(fixture.parent).sections).to.not.deep.include({
      name: 'tool:structured_output',
      order: 190,
      text: STRUCTURED_OUTPUT_INSTRUCTION,
    })
    await run.dispose()
  })

  it('equips a structured child in its own tables without making it a context or a fiber', async () => {
    const fixture = await createFixture()
    void fixture.parent.ctx
    const fibers = fixture.host.snapshot().fibers
    fixture.host.scripted.push({ toolCalls: [call('structured_output', { answer: 1 })] })
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
    expect((await run.result).structured).to.deep.equal({ answer: 1 })
    expect(scopeOf(run.agent)!.ctx).to.equal(undefined)
    expect(fixture.host.snapshot().fibers).to.equal(fibers)
    await run.dispose()
  })

  it('leaves a child without outputSchema untouched: no scope fiber, no tool', async () => {
    const fixture = await createFixture()
    void fixture.parent.ctx
    const fibers = fixture.host.snapshot().fibers
    fixture.host.scripted.push({ text: 'plain answer' })
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request({ outputSchema: undefined }))
    const result = await run.result
    expect(result).to.deep.equal({ output: [{ type: 'text', text: 'plain answer' }], stopReason: 'completed' })
    expect(fixture.host.snapshot().fibers).to.equal(fibers)
    expect(fixture.host.scripted.requests[0]).to.not.have.property('tools')
    await run.dispose()
  })
})
