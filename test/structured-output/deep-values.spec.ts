import { expect } from 'chai'
import type { ToolExecution, ToolResult } from '../../lib/types.ts'
import { MAX_VALUE_DEPTH } from '../../plugins/structured-output/index.ts'
import { createFixture as createToolFixture, delegate, textOf } from '../subagent-tool/fixture.ts'
import { createFixture } from './fixture.ts'

/** JSON text of an object whose `a` holds arrays nested so the whole value is `depth` levels deep. */
function nested(depth: number): string {
  return `{"a":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`
}

/** A frozen value of `levels + 2` objects and 2^levels paths: `[x, x]` nested `levels` times. */
function sharedEverywhere(levels: number): unknown {
  let x: unknown = Object.freeze({ leaf: 1 })
  for (let i = 0; i < levels; i++) x = Object.freeze([x, x])
  return Object.freeze({ a: x })
}

describe('StructuredOutput value depth', () => {
  it('pins the value depth limit at 64 levels', () => {
    expect(MAX_VALUE_DEPTH).to.equal(64)
  })

  it('rejects a capture nested deeper than the limit with INVALID_ARGS naming the limit', async () => {
    const fixture = await createFixture()
    const seen: ToolResult[] = []
    const off = fixture.host.root.on('tools/result', (exec: ToolExecution, result: ToolResult) => {
      if (exec.name === 'structured_output') seen.push(result)
    })
    fixture.host.scripted.push({ toolCalls: [{ name: 'structured_output', arguments: nested(65) }] }, { text: 'gave up' })
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request({ outputSchema: { type: 'object' } }))
    const result = await run.result
    off()
    expect(seen).to.deep.equal([
      { isError: true, content: [{ type: 'text', text: 'Error: invalid arguments: value is nested deeper than 64 levels' }], code: 'INVALID_ARGS' },
    ])
    expect(result.stopReason).to.equal('error')
    await run.dispose()
  })

  it('commits a capture nested exactly as deep as the limit', async () => {
    const fixture = await createFixture()
    fixture.host.scripted.push({ toolCalls: [{ name: 'structured_output', arguments: nested(64) }] })
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request({ outputSchema: { type: 'object' } }))
    const result = await run.result
    expect(result.stopReason).to.equal('completed')
    expect(result.structured).to.deep.equal(JSON.parse(nested(64)))
    await run.dispose()
  })

  it('answers the parent with a failed run, not a stack overflow, for a value 20,000 deep', async () => {
    const fixture = await createToolFixture({ structuredOutput: true })
    const { result } = await delegate(
      fixture,
      { prompt: 'answer deeply', output_schema: { type: 'object' } },
      { toolCalls: [{ name: 'structured_output', arguments: nested(20_000) }] },
      { text: 'gave up' },
    )
    expect(textOf(result)).to.equal(
      'Error: subagent run failed\nDiagnostic: the child finished without calling structured_output successfully\nPartial output before the run ended:\ngave up',
    )
  })

  it('records an argument that shares one object at each of 40 levels, walking objects rather than paths', async () => {
    // a plugin may hand `tools.execute` such a value; the model's arguments arrive as JSON text
    const fixture = await createFixture()
    fixture.host.scripted.push('hang')
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request({ outputSchema: { type: 'object' } }))
    const value = sharedEverywhere(40)
    const result = await fixture.host.root.tools.execute({ name: 'structured_output', arguments: value, agent: run.agent })
    expect(result.isError).to.equal(false)
    await run.dispose()
  })
})
