import { SpanStatusCode } from '@opentelemetry/api'
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base'
import { expect } from 'chai'
import CodeMode from '../../plugins/code-mode/index.ts'
import Tracing from '../../plugins/tracing/index.ts'
import { createGate } from '../support/driver.ts'
import { createTracingHost, firstDelta, type TracingHost } from './fixture.ts'
import { spanTree } from './recorder.ts'

function named(spans: ReadableSpan[], name: string): ReadableSpan {
  const found = spans.filter((span) => span.name === name)
  expect(found, `spans named "${name}"`).to.have.length(1)
  return found[0]!
}

describe('Tracing spans', () => {
  let host: TracingHost

  beforeEach(async () => {
    host = await createTracingHost()
  })


  async function delegate(args: Record<string, unknown>, ...child: Parameters<typeof host.scripted.push>): Promise<void> {
    host.scripted.push({ toolCalls: [{ id: 'call_sub', name: 'subagent', arguments: args }] }, ...child, { text: 'parent done' })
    host.parent.followup('delegate please')
    await host.parent.whenIdle()
  }

  it('nests the child run under the parent tool call that started it', async () => {
    await delegate({ prompt: 'review it', label: 'review' }, { text: 'looks good' })
    expect(spanTree(host.recorder.spans())).to.deep.equal([
      {
        [`invoke_agent ${host.parent.id}`]: [
          'chat test',
          { 'execute_tool subagent': [{ 'invoke_agent review': ['chat test'] }] },
          'chat test',
        ],
      },
    ])
  })

  it("names the run span after the child's id when the call gave no label", async () => {
    let childId: string | undefined
    const off = host.root.on('subagent/start', (info) => void (childId = info.childId))
    await delegate({ prompt: 'review it' }, { text: 'looks good' })
    off()
    const run = named(host.recorder.spans(), `invoke_agent ${childId}`)
    expect(run.attributes['gen_ai.agent.id']).to.equal(childId)
    expect(run.attributes).not.to.have.property('gen_ai.agent.name')
  })

  it('records model, usage and stop reason with the GenAI attribute names', async () => {
    await delegate({ prompt: 'review it', label: 'review', mode: 'fork' }, { text: 'looks good', usage: { inputTokens: 30, outputTokens: 4 } })
    const spans = host.recorder.spans()
    const run = named(spans, 'invoke_agent review')
    expect(run.attributes).to.include({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'review',
      'subagent.depth': 1,
      'subagent.mode': 'fork',
      'subagent.stop_reason': 'completed',
      'subagent.root_id': host.parent.id,
      'gen_ai.usage.input_tokens': 30,
      'gen_ai.usage.output_tokens': 4,
    })
    expect(run.status.code).to.equal(SpanStatusCode.UNSET)
    const chat = spans.find((span) => span.name === 'chat test' && span.parentSpanContext?.spanId === run.spanContext().spanId)!
    expect(chat.attributes).to.include({
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'test',
      'gen_ai.provider.name': 'scripted',
      'gen_ai.usage.input_tokens': 30,
      'gen_ai.usage.output_tokens': 4,
    })
    expect(named(spans, 'execute_tool subagent').attributes).to.include({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'subagent',
      'gen_ai.tool.call.id': 'call_sub',
    })
  })

  it('marks a run that ended with an error with error status', async () => {
    await delegate({ prompt: 'review it', label: 'review' }, new Error('upstream 503'))
    const run = named(host.recorder.spans(), 'invoke_agent review')
    expect(run.attributes['subagent.stop_reason']).to.equal('error')
    expect(run.status).to.deep.equal({ code: SpanStatusCode.ERROR, message: 'error' })
    expect(named(host.recorder.spans(), 'execute_tool subagent').status.code).to.equal(SpanStatusCode.ERROR)
  })

  it('marks a cancelled run and its interrupted request with error status', async () => {
    const controller = new AbortController()
    host.scripted.push('hang')
    const run = await host.root.inprocessRun.spawn({ parent: host.parent, prompt: 'wait', label: 'slow', signal: controller.signal })
    await firstDelta(host, run.id)
    controller.abort()
    expect((await run.result).stopReason).to.equal('aborted')
    await run.dispose()
    const spans = host.recorder.spans()
    expect(named(spans, 'invoke_agent slow').status).to.deep.equal({ code: SpanStatusCode.ERROR, message: 'aborted' })
    expect(named(spans, 'chat test').status).to.deep.equal({ code: SpanStatusCode.ERROR, message: 'interrupted' })
  })

  it('marks a run that hit its token limit with error status (SPEC §10)', async () => {
    host.scripted.push({ text: 'half an answer', finish: 'max-tokens' })
    const run = await host.root.inprocessRun.spawn({ parent: host.parent, prompt: 'write it', label: 'long', signal: new AbortController().signal })
    expect((await run.result).stopReason).to.equal('max-tokens')
    await run.dispose()
    const span = named(host.recorder.spans(), 'invoke_agent long')
    expect([span.attributes['subagent.stop_reason'], span.status]).to.deep.equal(['max-tokens', { code: SpanStatusCode.ERROR, message: 'max-tokens' }])
  })

  it('marks a run whose turn a pre-step hook refused with error status (SPEC §10)', async () => {
    host.on('agent/pre-step', (agent, _step, next) => (agent === host.parent ? next() : { kind: 'reject' }))
    const run = await host.root.inprocessRun.spawn({ parent: host.parent, prompt: 'do it', label: 'refused', signal: new AbortController().signal })
    expect((await run.result).stopReason).to.equal('refusal')
    await run.dispose()
    const span = named(host.recorder.spans(), 'invoke_agent refused')
    expect([span.attributes['subagent.stop_reason'], span.status]).to.deep.equal(['refusal', { code: SpanStatusCode.ERROR, message: 'refusal' }])
  })

  it('leaves no span open once a run disposed mid-request is disposed, with Tracing still loaded (SPEC §10)', async () => {
    host.scripted.push('hang')
    const run = await host.root.inprocessRun.spawn({ parent: host.parent, prompt: 'wait', label: 'slow', signal: new AbortController().signal })
    await firstDelta(host, run.id)
    expect(host.recorder.open()).to.equal(2)
    await run.dispose()
    expect(host.recorder.open()).to.equal(0)
    expect(host.recorder.spans().map((span) => span.name)).to.have.members(['chat test', 'invoke_agent slow'])
  })

  it('keeps concurrent children as siblings under their own tool spans', async () => {
    const gates = [createGate(), createGate()]
    let next = 0
    host.root.models.register('gated', { stream: (request) => gates[next++]!.adapter.stream(request) })
    const parent = await host.root.agents.create({ agentOptions: { provider: 'gated', model: 'test' } })
    const call = (callId: string, label: string) =>
      host.root.tools.execute({ name: 'subagent', callId, agent: parent.agent, arguments: { prompt: `task ${label}`, label } })
    const results = [call('call_1', 'one'), call('call_2', 'two')]
    await Promise.all(gates.map((gate) => gate.entered))
    gates[1]!.open('second')
    gates[0]!.open('first')
    expect((await Promise.all(results)).map((result) => result.isError)).to.deep.equal([false, false])
    await parent.dispose()
    const spans = host.recorder.spans()
    for (const [callId, label] of [['call_1', 'one'], ['call_2', 'two']]) {
      const tool = spans.find((span) => span.attributes['gen_ai.tool.call.id'] === callId)!
      expect(named(spans, `invoke_agent ${label}`).parentSpanContext?.spanId).to.equal(tool.spanContext().spanId)
      expect(tool.parentSpanContext).to.equal(undefined)
    }
  })

  it('keeps concurrent children under their own tool spans when their calls share one call id', async () => {
    const gates = [createGate(), createGate()]
    let next = 0
    host.root.models.register('gated', { stream: (request) => gates[next++]!.adapter.stream(request) })
    const parent = await host.root.agents.create({ agentOptions: { provider: 'gated', model: 'test' } })
    const call = (label: string) =>
      host.root.tools.execute({ name: 'subagent', callId: 'same', agent: parent.agent, arguments: { prompt: `task ${label}`, label } })
    const results = [call('one'), call('two')]
    await Promise.all(gates.map((gate) => gate.entered))
    gates[0]!.open('first')
    gates[1]!.open('second')
    expect((await Promise.all(results)).map((result) => result.isError)).to.deep.equal([false, false])
    await parent.dispose()
    const spans = host.recorder.spans()
    const tools = spans.filter((span) => span.name === 'execute_tool subagent').map((span) => span.spanContext().spanId)
    const parents = ['one', 'two'].map((label) => named(spans, `invoke_agent ${label}`).parentSpanContext?.spanId)
    expect(tools).to.have.length(2)
    expect(parents).to.have.members(tools)
  })

  it('gives a call that skipped the hooks its own error span', async () => {
    host.scripted.push({ toolCalls: [{ id: 'call_x', name: 'missing', arguments: '{}' }] }, { text: 'ok' })
    host.parent.followup('call a missing tool')
    await host.parent.whenIdle()
    const tool = named(host.recorder.spans(), 'execute_tool missing')
    expect(tool.status).to.deep.equal({ code: SpanStatusCode.ERROR, message: 'UNKNOWN_TOOL' })
    expect(tool.attributes['gen_ai.tool.call.id']).to.equal('call_x')
  })

  it('opens a tool span before a pre-execute listener loaded earlier runs, so the span covers its denial', async () => {
    await host.tracing.dispose()
    host.baseline = host.snapshots[2]!
    let openWhenAsked: number | undefined
    const off = host.root.on('tools/pre-execute', () => {
      openWhenAsked = host.recorder.open()
      return { kind: 'deny', reason: 'not now' }
    })
    const reloaded = host.root.plugin(Tracing, {})
    await reloaded
    host.scripted.push({ toolCalls: [{ id: 'call_d', name: 'subagent', arguments: { prompt: 'look' } }] }, { text: 'ok' })
    host.parent.followup('delegate please')
    await host.parent.whenIdle()
    await reloaded.dispose()
    off()
    // the root turn's span and the tool's (the request's ended with the model's message)
    expect(openWhenAsked).to.equal(2)
    expect(named(host.recorder.spans(), 'execute_tool subagent').status.code).to.equal(SpanStatusCode.ERROR)
  })

  it('nests a run started from Code Mode under the binding call inside run_code', async () => {
    const codeMode = host.root.plugin(CodeMode, {} as CodeMode.Config)
    await codeMode
    host.scripted.push({ text: 'from the child' })
    const result = await host.root.tools.execute({
      name: 'run_code',
      callId: 'call_code',
      agent: host.parent,
      arguments: { code: "return await tools.subagent({ prompt: 'look', label: 'nested' })" },
    })
    expect(result.isError).to.equal(false)
    await codeMode.dispose()
    expect(spanTree(host.recorder.spans())).to.deep.equal([
      { 'execute_tool run_code': [{ 'execute_tool subagent': [{ 'invoke_agent nested': ['chat test'] }] }] },
    ])
  })
})
