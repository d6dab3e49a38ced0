import { expect } from 'chai'
import type { ToolExecution, ToolResult } from '../../lib/types.ts'
import {
  MISSING_CAPTURE,
  RECORDED_TEXT,
  STRUCTURED_OUTPUT_DESCRIPTION,
  STRUCTURED_OUTPUT_INSTRUCTION,
} from '../../plugins/structured-output/index.ts'
import { call, createFixture, toolResults, userMessages } from './fixture.ts'

describe('StructuredOutput capture (SPEC §3)', () => {
  it('pins the tool description, the instruction and the recorded text', () => {
    expect(STRUCTURED_OUTPUT_DESCRIPTION).to.equal(
      "Report your final structured result. Call this exactly once, when your answer is complete; the arguments must match this tool's parameter schema exactly.",
    )
    expect(STRUCTURED_OUTPUT_INSTRUCTION).to.equal(
      'When you have your final answer, you MUST report it by calling the `structured_output` tool with arguments matching its parameter schema exactly. Do not finish with a plain text answer: only the tool call counts as your result.',
    )
    expect(RECORDED_TEXT).to.equal('Structured output recorded.')
  })

  it('completes after a correct first call with exactly one model request', async () => {
    const fixture = await createFixture()
    fixture.host.scripted.push({ toolCalls: [call('structured_output', { answer: 42 })] })
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
    const result = await run.result
    expect(result.stopReason).to.equal('completed')
    expect(result.structured).to.deep.equal({ answer: 42 })
    expect(result).to.not.have.property('diagnostic')
    expect(fixture.host.scripted.requests).to.have.length(1)
    await run.dispose()
  })

  it('answers a valid capture with {recorded: true} rendered "Structured output recorded."', async () => {
    const fixture = await createFixture()
    const seen: ToolResult[] = []
    const off = fixture.host.root.on('tools/result', (exec: ToolExecution, result: ToolResult) => {
      if (exec.name === 'structured_output') seen.push(result)
    })
    fixture.host.scripted.push({ toolCalls: [call('structured_output', { answer: 1 })] })
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
    await run.result
    off()
    expect(seen).to.deep.equal([
      { isError: false, value: { recorded: true }, content: [{ type: 'text', text: 'Structured output recorded.' }] },
    ])
    await run.dispose()
  })

  it('reports each capture’s success as a result of its own, frozen as tools/result observers get every result', async () => {
    const fixture = await createFixture()
    const seen: { result: ToolResult; frozen: boolean[] }[] = []
    const off = fixture.host.root.on('tools/result', (exec: ToolExecution, result: ToolResult) => {
      if (exec.name === 'structured_output') seen.push({ result, frozen: [Object.isFrozen(result), Object.isFrozen(result.content)] })
    })
    for (const answer of [1, 2]) {
      fixture.host.scripted.push({ toolCalls: [call('structured_output', { answer })] })
      const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
      await run.result
      await run.dispose()
    }
    off()
    expect(seen.map((entry) => entry.frozen)).to.deep.equal([
      [true, true],
      [true, true],
    ])
    expect(seen[0]!.result).to.not.equal(seen[1]!.result)
    expect(seen[0]!.result.content).to.not.equal(seen[1]!.result.content)
  })

  it('reports invalid arguments with paths and code INVALID_ARGS', async () => {
    const fixture = await createFixture()
    const seen: ToolResult[] = []
    const off = fixture.host.root.on('tools/result', (exec: ToolExecution, result: ToolResult) => {
      if (exec.name === 'structured_output') seen.push(result)
    })
    fixture.host.scripted.push(
      { toolCalls: [call('structured_output', { answer: 'x', extra: true })] },
      { toolCalls: [call('structured_output', { answer: 7 })] },
    )
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
    await run.result
    off()
    expect(seen[0]).to.deep.equal({
      isError: true,
      content: [
        {
          type: 'text',
          text: 'Error: invalid arguments: value must NOT have additional property "extra"; value.answer must be integer',
        },
      ],
      code: 'INVALID_ARGS',
    })
    await run.dispose()
  })

  it('lists 20 violations of a capture whose array argument has 30 wrong items, then counts the rest', async () => {
    const fixture = await createFixture()
    const outputSchema = {
      type: 'object',
      properties: { tags: { type: 'array', items: { type: 'string' } } },
      required: ['tags'],
    } as const
    fixture.host.scripted.push(
      { toolCalls: [call('structured_output', { tags: new Array(30).fill(0) })] },
      { toolCalls: [call('structured_output', { tags: ['ok'] })] },
    )
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request({ outputSchema }))
    await run.result
    const listed = Array.from({ length: 20 }, (_, i) => `value.tags[${i}] must be string`).join('; ')
    expect(toolResults(run.agent)[0]).to.deep.include({
      isError: true,
      content: [{ type: 'text', text: `Error: invalid arguments: ${listed}; … and 10 more` }],
    })
    await run.dispose()
  })

  it('commits a right call that follows a wrong one in the same response', async () => {
    const fixture = await createFixture()
    fixture.host.scripted.push({
      toolCalls: [call('structured_output', { answer: 'forty-two' }), call('structured_output', { answer: 42 })],
    })
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
    const result = await run.result
    expect(result.stopReason).to.equal('completed')
    expect(result.structured).to.deep.equal({ answer: 42 })
    expect(toolResults(run.agent).map((entry) => entry.isError)).to.deep.equal([true, false])
    expect(fixture.host.scripted.requests).to.have.length(1)
    await run.dispose()
  })

  it('commits a retry in the next step of the same turn after the model saw the violation', async () => {
    const fixture = await createFixture()
    fixture.host.scripted.push(
      { toolCalls: [call('structured_output', { answer: 'forty-two' })] },
      { toolCalls: [call('structured_output', { answer: 42 })] },
    )
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
    const result = await run.result
    expect(result.stopReason).to.equal('completed')
    expect(result.structured).to.deep.equal({ answer: 42 })
    const requests = fixture.host.scripted.requests
    expect(requests).to.have.length(2)
    expect(requests[1]!.messages.at(-1)).to.deep.include({
      role: 'tool',
      isError: true,
      content: [{ type: 'text', text: 'Error: invalid arguments: value.answer must be integer' }],
    })
    expect(userMessages(run.agent)).to.equal(1)
    await run.dispose()
  })

  it('ends with error after prose instead of the tool: one model request, no nudge', async () => {
    const fixture = await createFixture()
    fixture.host.scripted.push({ text: 'The answer is 42.' })
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
    const result = await run.result
    expect(result).to.deep.equal({
      output: [{ type: 'text', text: 'The answer is 42.' }],
      stopReason: 'error',
      diagnostic: 'the child finished without calling structured_output successfully',
      diagnosticText: { key: 'missingCapture', params: {} },
    })
    expect(MISSING_CAPTURE).to.equal('the child finished without calling structured_output successfully')
    expect(fixture.host.scripted.requests).to.have.length(1)
    expect(userMessages(run.agent)).to.equal(1)
    await run.dispose()
  })

  it('ends with error when every capture was invalid and the model then answered in prose', async () => {
    const fixture = await createFixture()
    fixture.host.scripted.push({ toolCalls: [call('structured_output', { answer: 'x' })] }, { text: 'giving up' })
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
    const result = await run.result
    expect(result.stopReason).to.equal('error')
    expect(result.diagnostic).to.equal(MISSING_CAPTURE)
    expect(result).to.not.have.property('structured')
    await run.dispose()
  })

  it('returns a plain frozen JSON copy without prototype pollution', async () => {
    const fixture = await createFixture()
    const schema = { type: 'object', properties: { answer: { type: 'object' } } }
    fixture.host.scripted.push({
      toolCalls: [call('structured_output', '{"answer":{"__proto__":{"polluted":true},"constructor":1}}')],
    })
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request({ outputSchema: schema }))
    const result = await run.result
    const value = result.structured as { answer: Record<string, unknown> }
    expect(Object.getPrototypeOf(value)).to.equal(Object.prototype)
    expect(Object.getPrototypeOf(value.answer)).to.equal(Object.prototype)
    expect(Object.keys(value.answer)).to.deep.equal(['__proto__', 'constructor'])
    expect(Object.getOwnPropertyDescriptor(value.answer, '__proto__')?.value).to.deep.equal({ polluted: true })
    expect(({} as { polluted?: unknown }).polluted).to.equal(undefined)
    expect(Object.isFrozen(value) && Object.isFrozen(value.answer)).to.equal(true)
    await run.dispose()
  })

  it('keeps a non-completed outcome without a commit as the driver read it', async () => {
    const fixture = await createFixture()
    fixture.host.scripted.push({ text: 'cut', finish: 'max-tokens' })
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
    const result = await run.result
    expect(result.stopReason).to.equal('max-tokens')
    expect(result.diagnostic).to.equal('the child hit its token limit')
    await run.dispose()
  })
})
