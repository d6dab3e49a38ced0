import { SpanStatusCode } from '@opentelemetry/api'
import { expect } from 'chai'
import type { SubagentRun } from '../../lib/types.ts'
import Tracing, { tracingFailedMessage, UNFINISHED_REASON } from '../../plugins/tracing/index.ts'
import { createTracingHost, firstDelta, type TracingHost } from './fixture.ts'
import type { Failure } from './recorder.ts'

describe('Tracing lifecycle and faults', () => {
  let host: TracingHost

  beforeEach(async () => {
    host = await createTracingHost()
  })


  /** A run whose model streams `partial` and then waits for the abort. */
  async function hangingRun(controller: AbortController): Promise<SubagentRun> {
    host.scripted.push('hang')
    const run = await host.root.inprocessRun.spawn({ parent: host.parent, prompt: 'wait', label: 'slow', signal: controller.signal })
    await firstDelta(host, run.id)
    return run
  }

  it('ends every open span, marked unfinished, when the plugin is unloaded mid-run', async () => {
    const controller = new AbortController()
    const run = await hangingRun(controller)
    expect(host.recorder.open()).to.equal(2)
    await host.tracing.dispose()
    host.baseline = host.snapshots[2]!
    expect(host.recorder.open()).to.equal(0)
    const spans = host.recorder.spans()
    expect(spans.map((span) => span.name).sort()).to.deep.equal(['chat test', 'invoke_agent slow'])
    for (const span of spans) {
      expect(span.attributes['subagent.unfinished']).to.equal(true)
      expect(span.status).to.deep.equal({ code: SpanStatusCode.ERROR, message: UNFINISHED_REASON })
    }
    controller.abort()
    await run.dispose()
    expect(host.recorder.spans()).to.have.length(2)
  })

  it('leaves no span open across a hot reload in the middle of a run', async () => {
    const controller = new AbortController()
    const run = await hangingRun(controller)
    await host.tracing.dispose()
    host.baseline = host.snapshots[2]!
    const reloaded = host.root.plugin(Tracing, {})
    await reloaded
    controller.abort()
    await run.dispose()
    host.parent.followup('after the reload')
    host.scripted.push({ text: 'traced again' })
    await host.parent.whenIdle()
    await reloaded.dispose()
    expect(host.recorder.open()).to.equal(0)
    expect(host.recorder.spans().map((span) => span.name)).to.include.members([`invoke_agent ${host.parent.id}`, 'chat test'])
  })

  it("keeps a run's open spans through a config update and ends them as usual", async () => {
    const controller = new AbortController()
    const run = await hangingRun(controller)
    await host.tracing.update({ tracerName: 'renamed' })
    expect(host.recorder.open()).to.equal(2)
    controller.abort()
    await run.result
    await run.dispose()
    const spans = host.recorder.spans()
    expect(spans.map((span) => span.name).sort()).to.deep.equal(['chat test', 'invoke_agent slow'])
    for (const span of spans) expect(span.attributes['subagent.unfinished']).to.equal(undefined)
  })

  it('starts the spans after a config update on the new tracer name', async () => {
    await host.tracing.update({ tracerName: 'renamed' })
    host.scripted.push({ text: 'traced' })
    host.parent.followup('go')
    await host.parent.whenIdle()
    const scopes = host.recorder.spans().map((span) => [span.name, span.instrumentationScope.name])
    expect(scopes).to.deep.equal([
      ['chat test', 'renamed'],
      [`invoke_agent ${host.parent.id}`, 'renamed'],
    ])
  })

  const faults: [Failure, string][] = [
    ['tracer', 'tracer is broken'],
    ['processor-throws', 'processor is broken'],
  ]
  for (const [failure, message] of faults) {
    it(`contains a ${failure === 'tracer' ? 'throwing tracer' : 'throwing span processor'} and logs it once`, async () => {
      host.recorder.failure = failure
      host.scripted.push({ toolCalls: [{ id: 'call_sub', name: 'subagent', arguments: { prompt: 'go' } }] }, { text: 'child' }, { text: 'done' })
      host.parent.followup('delegate')
      await host.parent.whenIdle()
      const last = host.parent.session.events.at(-1)
      expect(last?.data).to.deep.equal({ turn: 1, reason: { kind: 'completed' } })
      expect(host.logged().filter((line) => line.includes('tracing failed'))).to.deep.equal([tracingFailedMessage(message)])
      host.recorder.failure = 'none'
    })
  }

  for (const failure of ['exporter-throws', 'exporter-fails'] as const) {
  it(`keeps the host running when the exporter ${failure === 'exporter-throws' ? 'throws' : 'reports a failed export'}`, async () => {
    host.recorder.failure = failure
    host.scripted.push({ text: 'fine' })
    host.parent.followup('hello')
    await host.parent.whenIdle()
    expect(host.parent.session.events.at(-1)?.data).to.deep.equal({ turn: 1, reason: { kind: 'completed' } })
    host.recorder.failure = 'none'
  })
  }
})
