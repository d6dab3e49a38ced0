import { expect } from 'chai'
import sinon from 'sinon'
import type { Agent, PreExecuteDecision } from '../../lib/types.ts'
import { alreadyRecorded } from '../../plugins/structured-output/index.ts'
import { call, createFixture, type Fixture, toolResults } from './fixture.ts'

/** Registers a global tool `other` whose body is the returned spy. */
function otherTool(fixture: Fixture): sinon.SinonSpy {
  const body = sinon.spy(() => 'other ran')
  fixture.host.root.tools.register({
    name: 'other',
    description: 'another tool',
    parameters: { type: 'object' },
    execute: body,
  })
  return body
}

function resultOf(agent: Agent, callId: string) {
  return toolResults(agent).find((entry) => entry.callId === callId)
}

describe('StructuredOutput guard (SPEC §3)', () => {
  it('pins the deny reason', () => {
    expect(alreadyRecorded('other')).to.equal(
      'structured output already recorded: the run is complete, so `other` is not executed',
    )
  })

  it('denies a call that follows the capture in the same response, and its body never runs', async () => {
    const fixture = await createFixture()
    const body = otherTool(fixture)
    fixture.host.scripted.push({ toolCalls: [call('structured_output', { answer: 1 }, 'c1'), call('other', {}, 'c2')] })
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
    const result = await run.result
    expect(body.called).to.equal(false)
    expect(resultOf(run.agent, 'c2')).to.deep.include({
      isError: true,
      content: [{ type: 'text', text: 'Error: structured output already recorded: the run is complete, so `other` is not executed' }],
    })
    expect(result.stopReason).to.equal('completed')
    expect(result.structured).to.deep.equal({ answer: 1 })
    expect(fixture.host.scripted.requests).to.have.length(1)
    await run.dispose()
  })

  it('denies with code TOOL_DENIED even when a prepended listener allows the call', async () => {
    const fixture = await createFixture()
    const body = otherTool(fixture)
    const codes: (string | undefined)[] = []
    const offAllow = fixture.host.root.on('tools/pre-execute', (): PreExecuteDecision => ({ kind: 'allow' }), { prepend: true })
    const offResult = fixture.host.root.on('tools/result', (exec, result) => {
      if (exec.name === 'other') codes.push(result.code)
    })
    fixture.host.scripted.push({ toolCalls: [call('structured_output', { answer: 1 }), call('other', {})] })
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
    await run.result
    offAllow()
    offResult()
    expect(body.called).to.equal(false)
    expect(codes).to.deep.equal(['TOOL_DENIED'])
    await run.dispose()
  })

  it('runs a call that comes before the capture in the same response', async () => {
    const fixture = await createFixture()
    const body = otherTool(fixture)
    fixture.host.scripted.push({ toolCalls: [call('other', {}, 'c1'), call('structured_output', { answer: 2 }, 'c2')] })
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
    const result = await run.result
    expect(body.calledOnce).to.equal(true)
    expect(resultOf(run.agent, 'c1')).to.deep.include({ isError: false, content: [{ type: 'text', text: 'other ran' }] })
    expect(result.structured).to.deep.equal({ answer: 2 })
    await run.dispose()
  })

  it('denies a second capture and keeps the first value', async () => {
    const fixture = await createFixture()
    fixture.host.scripted.push({
      toolCalls: [call('structured_output', { answer: 1 }), call('structured_output', { answer: 2 }, 'c2')],
    })
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
    const result = await run.result
    expect(result.structured).to.deep.equal({ answer: 1 })
    expect(resultOf(run.agent, 'c2')?.content).to.deep.equal([
      { type: 'text', text: 'Error: structured output already recorded: the run is complete, so `structured_output` is not executed' },
    ])
    await run.dispose()
  })

  it('denies a call made directly for the child after the commit', async () => {
    const fixture = await createFixture()
    const body = otherTool(fixture)
    fixture.host.scripted.push({ toolCalls: [call('structured_output', { answer: 1 })] })
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
    await run.result
    const late = await fixture.host.root.tools.execute({ name: 'other', arguments: {}, agent: run.agent })
    expect(late).to.deep.equal({
      isError: true,
      content: [{ type: 'text', text: 'Error: structured output already recorded: the run is complete, so `other` is not executed' }],
      code: 'TOOL_DENIED',
    })
    expect(body.called).to.equal(false)
    await run.dispose()
  })

  it('leaves the parent free to call tools after its child committed', async () => {
    const fixture = await createFixture()
    const body = otherTool(fixture)
    fixture.host.scripted.push({ toolCalls: [call('structured_output', { answer: 1 })] })
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
    await run.result
    const result = await fixture.host.root.tools.execute({ name: 'other', arguments: {}, agent: fixture.parent })
    expect(result.isError).to.equal(false)
    expect(body.calledOnce).to.equal(true)
    await run.dispose()
  })
})

describe('StructuredOutput guard: calls that never reach a body', () => {
  it('denies an unknown tool and unparseable arguments after the commit with the guard reason', async () => {
    const fixture = await createFixture()
    otherTool(fixture)
    fixture.host.scripted.push({
      toolCalls: [call('structured_output', { answer: 1 }, 'c1'), call('other', '{not json', 'c2'), call('nope', {}, 'c3')],
    })
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
    expect((await run.result).structured).to.deep.equal({ answer: 1 })
    for (const [id, tool] of [['c2', 'other'], ['c3', 'nope']]) {
      expect(resultOf(run.agent, id)?.content).to.deep.equal([
        { type: 'text', text: `Error: structured output already recorded: the run is complete, so \`${tool}\` is not executed` },
      ])
    }
    await run.dispose()
  })
})
