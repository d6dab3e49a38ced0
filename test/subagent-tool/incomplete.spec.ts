import { expect } from 'chai'
import type { Agent, SubagentPlan } from '../../lib/types.ts'
import { createFixture, delegate, textOf } from './fixture.ts'

describe('subagent tool: runs that do not complete', () => {
  it('reports a failed child with its diagnostic and partial output', async () => {
    const fixture = await createFixture()
    const { result } = await delegate(
      fixture,
      { prompt: 'task' },
      { text: 'draft', toolCalls: [{ name: 'missing', arguments: {} }] },
      new Error('upstream 503'),
    )
    expect(result.isError).to.equal(true)
    expect(result.code).to.equal('SUBAGENT_FAILED')
    expect(textOf(result)).to.equal(
      'Error: subagent run failed\nDiagnostic: the child turn failed: upstream 503\nPartial output before the run ended:\ndraft',
    )
  })

  it('reports a child that hit its token limit', async () => {
    const fixture = await createFixture()
    const { result } = await delegate(fixture, { prompt: 'task' }, { text: 'half an answer', finish: 'max-tokens' })
    expect(result.code).to.equal('SUBAGENT_MAX_TOKENS')
    expect(textOf(result)).to.equal(
      'Error: subagent run hit its token limit before finishing\nDiagnostic: the child hit its token limit\nPartial output before the run ended:\nhalf an answer',
    )
  })

  it('reports a child whose turn a pre-step hook rejected as declined, without partial output', async () => {
    const fixture = await createFixture()
    const off = fixture.host.root.on('subagent/setup', (child: Agent, _plan: SubagentPlan) => {
      child.ctx.on('agent/pre-step', () => ({ kind: 'reject' }))
    })
    const { result } = await delegate(fixture, { prompt: 'task' })
    off()
    expect(result.code).to.equal('SUBAGENT_DECLINED')
    expect(textOf(result)).to.equal('Error: subagent declined the task\nDiagnostic: a pre-step hook blocked the child turn')
  })

  it('reports a child cancelled with the parent turn, with the text it had streamed', async () => {
    const fixture = await createFixture()
    const { host, parent } = fixture
    let offDelta!: () => void
    const childStreaming = new Promise<void>((resolve) => {
      offDelta = host.root.on('session/event', (session, event) => {
        if (session.header.origin === 'subagent' && event.type === 'assistant/delta') resolve()
      })
    })
    let outcome: { text: string; code?: string; agents: number } | undefined
    parent.ctx.on('tools/result', (exec, result) => {
      if (exec.name === 'subagent') outcome = { text: textOf(result), code: result.code, agents: host.root.agents.list().length }
    })
    host.scripted.push({ toolCalls: [{ id: 'call_sub', name: 'subagent', arguments: { prompt: 'task' } }] }, 'hang')
    parent.followup('delegate please')
    await childStreaming
    offDelta()
    parent.cancel({ kind: 'user' })
    await parent.whenIdle()
    expect(outcome).to.deep.equal({
      text: 'Error: subagent run was cancelled\nDiagnostic: the run was cancelled (parent)\nPartial output before the run ended:\npartial',
      code: 'SUBAGENT_CANCELLED',
      agents: 1,
    })
    expect(parent.session.events.at(-1)!.data).to.deep.equal({ turn: 1, reason: { kind: 'aborted', cause: { kind: 'user' } } })
  })

  it('disposes the child before returning a failure', async () => {
    const fixture = await createFixture()
    const { agentsAtResult } = await delegate(fixture, { prompt: 'task' }, new Error('upstream 503'))
    expect(agentsAtResult).to.deep.equal([fixture.parent.id])
  })

  it('turns a rejected run result into the tool error and still disposes the child', async () => {
    const fixture = await createFixture()
    const off = fixture.host.root.on('subagent/settle', () => {
      throw new Error('settle listener broke')
    })
    const { result, agentsAtResult } = await delegate(fixture, { prompt: 'task' }, { text: 'done' })
    off()
    expect(textOf(result)).to.equal('Error: settle listener broke')
    expect(agentsAtResult).to.deep.equal([fixture.parent.id])
  })

  it('reports a structured run that ended without a value as failed', async () => {
    const fixture = await createFixture({ structuredOutput: true })
    const { result } = await delegate(
      fixture,
      { prompt: 'compute', output_schema: { type: 'object', properties: { answer: { type: 'integer' } } } },
      { text: 'the answer is 42' },
    )
    expect(textOf(result)).to.equal(
      'Error: subagent run failed\nDiagnostic: the child finished without calling structured_output successfully\nPartial output before the run ended:\nthe answer is 42',
    )
  })
})
