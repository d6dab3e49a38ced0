import { expect } from 'chai'
import { createFixture, delegate, textOf } from './fixture.ts'

describe('subagent tool: start errors', () => {
  it('hides the tool from a parent already at the DepthPolicy cap (SPEC §9)', async () => {
    const fixture = await createFixture({ depthPolicy: { maxDepth: 1 }, parent: { subagentDepth: 1 } })
    const { result, agentsAtResult } = await delegate(fixture, { prompt: 'task' })
    expect(result.code).to.equal('UNKNOWN_TOOL')
    expect(textOf(result)).to.equal('Error: unknown tool "subagent"')
    expect(agentsAtResult).to.deep.equal([fixture.parent.id])
  })

  it('applies the configured maxDepth to every call', async () => {
    const fixture = await createFixture({ tool: { maxDepth: 0 } })
    const { result } = await delegate(fixture, { prompt: 'task' })
    expect(textOf(result)).to.equal('Error: subagent depth 1 exceeds maxDepth 0')
  })

  it('reports an allowed tool name that no global tool has as one the parent cannot see', async () => {
    const fixture = await createFixture()
    const { result, agentsAtResult } = await delegate(fixture, { prompt: 'task', tools: { allow: ['nope'] } })
    expect(result.code).to.equal('TOOL_FAILED')
    expect(textOf(result)).to.equal('Error: subagent tool "nope" is not available to the parent')
    expect(agentsAtResult).to.deep.equal([fixture.parent.id])
  })

  it('reports an output schema when no plugin serves structured output', async () => {
    const fixture = await createFixture()
    const { result } = await delegate(fixture, { prompt: 'task', output_schema: { type: 'object' } })
    expect(result.code).to.equal('UNSUPPORTED_CAPABILITY')
    expect(textOf(result)).to.equal('Error: subagent runtime does not support the "outputSchema" capability')
  })

  it('reports an output schema outside the supported subset', async () => {
    const fixture = await createFixture({ structuredOutput: true })
    const { result } = await delegate(fixture, { prompt: 'task', output_schema: { type: 'object', minProperties: 1 } })
    expect(result.code).to.equal('UNSUPPORTED_SCHEMA')
    // the violation wording belongs to lib/schema/schema-subset.ts; SPEC pins the prefix
    expect(textOf(result)).to.match(/^Error: unsupported JSON schema: .*"minProperties"/)
  })

  it('rejects arguments outside its parameter schema before starting anything', async () => {
    const fixture = await createFixture()
    const { result } = await delegate(fixture, { prompt: 'task', depth: 3 })
    expect(result.code).to.equal('INVALID_ARGS')
    expect(textOf(result)).to.equal('Error: invalid arguments: value must NOT have additional property "depth"')
  })

  it('needs a calling agent', async () => {
    const fixture = await createFixture()
    const result = await fixture.host.root.tools.execute({ name: 'subagent', arguments: { prompt: 'task' } })
    expect(result.code).to.equal('NO_CALLING_AGENT')
    expect(textOf(result)).to.equal('Error: the subagent tool needs a calling agent')
  })

  it('reports a call whose signal aborted before the child was published', async () => {
    const fixture = await createFixture()
    const controller = new AbortController()
    controller.abort()
    const result = await fixture.host.root.tools.execute({
      name: 'subagent',
      arguments: { prompt: 'task' },
      agent: fixture.parent,
      signal: controller.signal,
    })
    expect(textOf(result)).to.equal('Error: subagent request was aborted before child publication')
  })

  it('reports a background call whose signal aborted before it started, and starts no child', async () => {
    const fixture = await createFixture()
    const before = fixture.host.root.agents.list().length
    const controller = new AbortController()
    controller.abort()
    const result = await fixture.host.root.tools.execute({
      name: 'subagent',
      arguments: { prompt: 'task', background: true },
      agent: fixture.parent,
      signal: controller.signal,
    })
    expect(textOf(result)).to.equal('Error: subagent request was aborted before child publication')
    expect(fixture.host.root.agents.list()).to.have.length(before)
  })
})
