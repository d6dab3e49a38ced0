import { expect } from 'chai'
import type { StreamPart } from '../../lib/types.ts'
import { createDriverHost } from '../support/driver.ts'

describe('InProcessRun result reading (SPEC §2.4)', () => {
  it('never reports the parent history of a fork', async () => {
    const host = await createDriverHost()
    host.scripted.push({ text: 'parent secret', usage: { inputTokens: 100, outputTokens: 100 } })
    host.parent.followup('first')
    await host.parent.whenIdle()
    host.scripted.push(new Error('upstream 503'))
    const run = await host.root.inprocessRun.fork(host.request())
    expect(await run.result).to.deep.equal({
      output: [],
      stopReason: 'error',
      diagnostic: 'the child turn failed: upstream 503',
      diagnosticText: { key: 'failedWithMessage', params: { message: 'upstream 503' } },
    })
    await run.dispose()
  })

  it('reports the last own message with content, skipping an empty usage-only one', async () => {
    const host = await createDriverHost()
    host.root.tools.register({ name: 'look', description: 'l', parameters: { type: 'object' }, execute: () => 'seen' })
    host.scripted.push(
      { text: 'looking', toolCalls: [{ id: 'a', name: 'look', arguments: '{}' }], usage: { inputTokens: 1, outputTokens: 1 } },
      { toolCalls: [{ id: 'b', name: 'look', arguments: '{}' }], finish: 'max-tokens', usage: { inputTokens: 2, outputTokens: 3 } },
    )
    const run = await host.root.inprocessRun.spawn(host.request())
    expect(await run.result).to.deep.equal({
      output: [{ type: 'text', text: 'looking' }, { type: 'tool-call', id: 'a', name: 'look', arguments: '{}' }],
      stopReason: 'max-tokens',
      diagnostic: 'the child hit its token limit',
      diagnosticText: { key: 'tokenLimit', params: {} },
      usage: { inputTokens: 3, outputTokens: 4 },
    })
    await run.dispose()
  })

  it('falls back to the streamed text when no message was written', async () => {
    const host = await createDriverHost()
    host.root.models.register('flaky', {
      async *stream(): AsyncGenerator<StreamPart> {
        yield { type: 'text-delta', text: 'half ' }
        yield { type: 'text-delta', text: 'done' }
        throw new Error('connection reset')
      },
    })
    const run = await host.root.inprocessRun.spawn(host.request({ agentOptions: { provider: 'flaky' } }))
    expect(await run.result).to.deep.equal({
      output: [{ type: 'text', text: 'half done' }],
      stopReason: 'error',
      diagnostic: 'the child turn failed: connection reset',
      diagnosticText: { key: 'failedWithMessage', params: { message: 'connection reset' } },
    })
    await run.dispose()
  })

  it('maps a blocked turn to refusal', async () => {
    const host = await createDriverHost()
    host.root.on('agent/pre-step', (agent, _info, next) =>
      agent.session.header.origin === 'subagent' ? { kind: 'reject' } : next(),
    )
    const run = await host.root.inprocessRun.spawn(host.request())
    expect(await run.result).to.deep.equal({
      output: [],
      stopReason: 'refusal',
      diagnostic: 'a pre-step hook blocked the child turn',
      diagnosticText: { key: 'blocked', params: {} },
    })
    expect(host.scripted.requests).to.have.length(0)
    await run.dispose()
  })

  it('maps MAX_STEPS to error with the code in the diagnostic', async () => {
    const host = await createDriverHost()
    host.root.tools.register({ name: 'again', description: 'a', parameters: { type: 'object' }, execute: () => 'more' })
    host.scripted.push({ toolCalls: [{ name: 'again', arguments: {} }] })
    const run = await host.root.inprocessRun.spawn(host.request({ agentOptions: { maxSteps: 1 } }))
    const result = await run.result
    expect(result.stopReason).to.equal('error')
    expect(result.diagnostic).to.equal('the child turn failed: turn exceeded maxSteps 1 (MAX_STEPS)')
    await run.dispose()
  })

  it('lets cancellation own a non-completed outcome', async () => {
    const host = await createDriverHost()
    host.scripted.push('hang')
    const run = await host.root.inprocessRun.spawn(host.request())
    const disposal = run.dispose()
    const result = await run.result
    expect(result.stopReason).to.equal('aborted')
    expect(result.diagnostic).to.equal('the run was cancelled (disposed)')
    await disposal
  })

  it('keeps a completed turn completed when the run is disposed afterwards', async () => {
    const host = await createDriverHost()
    host.scripted.push({ text: 'ok' })
    const run = await host.root.inprocessRun.spawn(host.request())
    await run.agent.whenIdle()
    await run.dispose()
    expect((await run.result).stopReason).to.equal('completed')
  })

  it('sums usage over the child own messages only', async () => {
    const host = await createDriverHost()
    host.scripted.push({ text: 'parent', usage: { inputTokens: 50, outputTokens: 50 } })
    host.parent.followup('first')
    await host.parent.whenIdle()
    host.root.tools.register({ name: 'look', description: 'l', parameters: { type: 'object' }, execute: () => 'seen' })
    host.scripted.push(
      { toolCalls: [{ name: 'look', arguments: {} }], usage: { inputTokens: 1, outputTokens: 2 } },
      { text: 'child', usage: { inputTokens: 3, outputTokens: 4 } },
    )
    const run = await host.root.inprocessRun.fork(host.request())
    expect((await run.result).usage).to.deep.equal({ inputTokens: 4, outputTokens: 6 })
    await run.dispose()
  })
})
