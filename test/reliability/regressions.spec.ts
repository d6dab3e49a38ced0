/**
 * Regression tests for the defects the reliability suites found, one per defect, each reduced to
 * the smallest scenario that showed it.
 */
import { expect } from 'chai'
import type { Agent, ContentBlock, StreamPart, SubagentStartRequest } from '../../lib/types.ts'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import { createHost, type TestHost } from '../support/harness.ts'
import { expectScopeCleared, settles } from './probe.ts'
import '../support/unhandled.ts'

const tool = { name: 'late', description: 'Registered too late.', parameters: { type: 'object' }, execute: () => 'late' }

async function rejection(promise: Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    await promise
  } catch (error) {
    return error as Error & { code?: string }
  }
  return expect.fail('expected a rejection')
}

async function driverHost(): Promise<{ host: TestHost; parent: Agent; request(extra?: Partial<SubagentStartRequest>): SubagentStartRequest }> {
  const host = await createHost()
  await host.root.plugin(InProcessRun)
  const parent = await host.agent()
  return { host, parent, request: (extra = {}) => ({ parent, prompt: 'task', signal: new AbortController().signal, ...extra }) }
}

/** Nests `leaf` `depth` levels deep in single-element arrays. */
function nested(depth: number): unknown {
  let value: unknown = 1
  for (let i = 0; i < depth; i++) value = [value]
  return value
}

describe('regressions found by the reliability suites', () => {
  it('settles a run as aborted when its parent is disposed as the child is published', async () => {
    // was: run.result rejected with `agent "<id>" is disposed`, as if the driver had failed
    const host = await createHost()
    await host.root.plugin(InProcessRun)
    const baseline = host.snapshot()
    const parent = await host.root.agents.create({ agentOptions: { provider: 'scripted', model: 'test' } })
    const off = host.root.on('agent/created', (agent: Agent) => {
      if (agent.id !== parent.agent.id) void parent.dispose()
    })
    const run = await host.root.inprocessRun.spawn({ parent: parent.agent, prompt: 'task', signal: new AbortController().signal })
    off()
    expect(await run.result).to.deep.equal({ output: [], stopReason: 'aborted', diagnostic: 'the run was cancelled', diagnosticText: { key: 'cancelled', params: {} } })
    expect(run.isCancelled).to.equal(true)
    await run.dispose()
    await parent.dispose()
    expect(host.scripted.requests).to.have.length(0)
    expect(host.snapshot()).to.deep.equal(baseline)
  })

  it('refuses a registration from a setup that outlived its aborted creation', async () => {
    // was: the late registration landed in the rolled-back agent's tables
    const host = await createHost()
    const baseline = host.snapshot()
    const controller = new AbortController()
    let open!: () => void
    const opened = new Promise<void>((resolve) => (open = resolve))
    let child: Agent | undefined
    let late: Promise<unknown> | undefined
    const creating = host.root.agents.create({
      signal: controller.signal,
      setup(agent) {
        child = agent
        const ctx = agent.ctx
        late = opened.then(() => ctx.tools.register(tool))
        return late.then(() => {})
      },
    })
    await Promise.resolve()
    controller.abort()
    expect((await rejection(creating)).name).to.equal('AbortError')
    open()
    const error = await rejection(late!)
    expect(error.message).to.equal(`agent "${child!.id}" is disposed`)
    expect(error.code).to.equal('AGENT_DISPOSED')
    expectScopeCleared(child!, 'the rolled-back agent')
    expect(host.snapshot()).to.deep.equal(baseline)
  })

  it('refuses scoped registrations through the context of a disposed agent', async () => {
    // was: a tool or section registered after disposal silently entered the cleared tables
    const host = await createHost()
    const handle = await host.root.agents.create({})
    const ctx = handle.agent.ctx
    await handle.dispose()
    const message = `agent "${handle.agent.id}" is disposed`
    expect(() => ctx.tools.register(tool)).to.throw(message)
    expect(() => ctx.systemPrompt.section({ name: 'late', order: 1, text: 'late' })).to.throw(message)
    expect(() => ctx.tools.guard(() => undefined)).to.throw(message)
    expectScopeCleared(handle.agent, 'the disposed agent')
  })

  it('ends the turn error when an adapter reports BigInt usage, instead of rejecting run.result', async () => {
    // was: readResult summed the BigInt and threw, so run.result rejected with a TypeError
    const { host, request } = await driverHost()
    host.root.models.register('odd', {
      async *stream(): AsyncGenerator<StreamPart> {
        yield { type: 'finish', reason: 'stop', usage: { inputTokens: 1n, outputTokens: 1 } as never }
      },
    })
    const run = await host.root.inprocessRun.spawn(request({ agentOptions: { provider: 'odd' } }))
    const result = await settles(run.result, 'run.result')
    expect(result.stopReason).to.equal('error')
    expect(result.diagnostic).to.equal(
      'the child turn failed: model adapter for provider "odd" yielded a malformed part: finish usage must have non-negative finite inputTokens and outputTokens (MODEL_FAILED)',
    )
    await run.dispose()
  })

  it('keeps a non-string text delta out of the session log', async () => {
    // was: `{type: 'text-delta', text: 42}` was appended as is and the run completed with "42"
    const { host, request } = await driverHost()
    host.root.models.register('odd', {
      async *stream(): AsyncGenerator<StreamPart> {
        yield { type: 'text-delta', text: 42 as never }
        yield { type: 'finish', reason: 'stop' }
      },
    })
    const run = await host.root.inprocessRun.spawn(request({ agentOptions: { provider: 'odd' } }))
    expect((await settles(run.result, 'run.result')).stopReason).to.equal('error')
    expect(run.agent.session.events.some((event) => event.type === 'assistant/delta')).to.equal(false)
    await run.dispose()
  })

  it('awaits an async agent/turn-stop listener instead of treating its promise as a yes', async () => {
    // was: the pending promise was truthy, so the turn ended completed, and a rejection went unhandled
    const { host, request } = await driverHost()
    host.root.tools.register({ name: 'probe', description: 'Probes.', parameters: { type: 'object' }, execute: () => 'ok' })
    host.root.on('agent/turn-stop', async () => false)
    host.scripted.push({ toolCalls: [{ name: 'probe', arguments: {} }] }, { text: 'second step ran' })
    const run = await host.root.inprocessRun.spawn(request())
    expect(await settles(run.result, 'run.result')).to.deep.equal({ output: [{ type: 'text', text: 'second step ran' }], stopReason: 'completed' })
    await run.dispose()
  })

  it('fails the step clearly when a system-prompt/assemble listener returns a promise', async () => {
    // was: its rejection went unhandled and the turn failed with "returned no assembly"
    const { host, request } = await driverHost()
    const broken = async () => {
      throw new Error('async assemble broke')
    }
    host.root.on('system-prompt/assemble', broken as never)
    const run = await host.root.inprocessRun.spawn(request())
    expect((await settles(run.result, 'run.result')).diagnostic).to.equal(
      'the child turn failed: a system-prompt/assemble listener returned a promise; the hook is synchronous',
    )
    await run.dispose()
  })

  it('logs the rejection of an async subagent/prepare listener instead of leaving it unhandled', async () => {
    const { host, request } = await driverHost()
    host.root.on('subagent/prepare', async () => {
      throw new Error('async policy broke')
    })
    host.scripted.push({ text: 'ok' })
    const run = await host.root.inprocessRun.spawn(request())
    expect((await settles(run.result, 'run.result')).stopReason).to.equal('completed')
    expect(host.logged()).to.deep.equal(['a "subagent/prepare" listener failed: async policy broke'])
    await run.dispose()
  })

  it('contains a session/event listener that throws an unprintable value', async () => {
    // was: the host's error sink threw while formatting it, so the append threw inside followup and
    // left the child running forever (run.dispose() never settled)
    const { host, request } = await driverHost()
    host.root.on('session/event', () => {
      throw Object.create(null)
    })
    host.scripted.push({ text: 'ok' })
    const run = await host.root.inprocessRun.spawn(request())
    expect((await settles(run.result, 'run.result')).stopReason).to.equal('completed')
    await settles(run.dispose(), 'run.dispose()')
    expect(host.logged().every((line) => line.endsWith('listener failed: unprintable thrown object'))).to.equal(true)
  })

  it('reports a tool that throws an unprintable value as a tool error', async () => {
    // was: formatting the error threw, the turn ended error and no tools/result was emitted
    const { host, request } = await driverHost()
    host.root.tools.register({ name: 'odd', description: 'Throws oddly.', parameters: { type: 'object' }, execute: () => {
      throw Object.create(null)
    } })
    const results: unknown[] = []
    host.root.on('tools/result', (_exec, result) => void results.push(result))
    host.scripted.push({ toolCalls: [{ name: 'odd', arguments: {} }] }, { text: 'after' })
    const run = await host.root.inprocessRun.spawn(request())
    expect((await settles(run.result, 'run.result')).stopReason).to.equal('completed')
    expect(results).to.deep.equal([{ isError: true, content: [{ type: 'text', text: 'Error: unprintable thrown object' }], code: 'TOOL_FAILED' }])
    await run.dispose()
  })

  it('checks a ToolResult-shaped return before it reaches the session log', async () => {
    // was: `{isError: false, content: [{type: 'text', text: 1n}]}` was recorded as is, so the log
    // (and SessionFiles, and the next model request) could not be serialized
    const { host, request } = await driverHost()
    host.root.tools.register({ name: 'odd', description: 'Returns junk.', parameters: { type: 'object' }, execute: () => ({
      isError: false,
      content: [{ type: 'text', text: 1n }],
    }) })
    host.scripted.push({ toolCalls: [{ name: 'odd', arguments: {} }] }, { text: 'after' })
    const run = await host.root.inprocessRun.spawn(request())
    await settles(run.result, 'run.result')
    expect(() => JSON.stringify(run.agent.session.events)).to.not.throw()
    const recorded = run.agent.session.events.find((event) => event.type === 'tool/result')?.data
    expect(recorded).to.deep.include({ isError: true, content: [{ type: 'text', text: 'Error: tool result content block 0 text must be a string, got bigint' }] })
    await run.dispose()
  })

  it('settles and disposes a run whose prompt block carries a deeply nested extra key', async () => {
    // was: freezing the nested value overflowed the stack after the turn had started, so the child
    // stayed running forever and run.dispose() never settled
    const { host, request } = await driverHost()
    const prompt = [{ type: 'text', text: 'look', extra: nested(200_000) }] as unknown as ContentBlock[]
    host.scripted.push({ text: 'ok' })
    const run = await host.root.inprocessRun.spawn(request({ prompt }))
    expect((await settles(run.result, 'run.result')).stopReason).to.equal('completed')
    await settles(run.dispose(), 'run.dispose()')
  })

  it('rejects a prompt block with a non-string text at entry', async () => {
    // was: accepted, and recorded in the session log as a number
    const { host, request } = await driverHost()
    const error = await rejection(host.root.inprocessRun.spawn(request({ prompt: [{ type: 'text', text: 5 }] as never })))
    expect(error.message).to.equal('subagent request prompt block 0 text must be a string, got number')
  })

  it('keeps an own __proto__ key of agentOptions instead of dropping it', async () => {
    // was: Object.assign ran the __proto__ setter, so the key was lost (and the options' prototype replaced)
    const { host, request } = await driverHost()
    host.scripted.push({ text: 'ok' })
    const run = await host.root.inprocessRun.spawn(request({ agentOptions: JSON.parse('{"__proto__":{"tier":"gold"}}') }))
    expect(Object.keys(run.agent.options)).to.include('__proto__')
    expect(Object.getPrototypeOf(run.agent.options)).to.equal(Object.prototype)
    await run.dispose()
  })

  it('rejects a create signal that is not an AbortSignal with a clear TypeError', async () => {
    // was: `signal.removeEventListener is not a function`, from deep inside the transaction
    const host = await createHost()
    const error = await rejection(host.root.agents.create({ signal: { aborted: false } as never, setup() {} }))
    expect(error).to.be.instanceOf(TypeError)
    expect(error.message).to.equal('agent create signal must be an AbortSignal')
  })

  it('rejects a parent without a session header as not an agent', async () => {
    // was: `Cannot read properties of undefined (reading 'delegationDepth')`
    const { host, request } = await driverHost()
    const fake = { id: 'fake', followup() {}, options: {}, session: { events: [] } }
    const error = await rejection(host.root.inprocessRun.spawn(request({ parent: fake as never })))
    expect(error.message).to.equal('subagent request parent must be an agent')
  })

  it('names the nesting limit when seed data is JSON but too deep', async () => {
    // was: `session seed event 0 data must be JSON data`, for data that is JSON
    const host = await createHost()
    const error = await rejection(host.root.agents.create({ seed: [{ seq: 0, type: 'note', data: nested(300) }] }))
    expect(error.message).to.equal('session seed event 0 data must be JSON data nested at most 256 levels deep')
  })

  it('emits no MaxListenersExceededWarning when 30 concurrent runs share one signal', async () => {
    // was: one abort listener per run (and per creation in its setup window) on the caller's signal
    const { host, request } = await driverHost()
    const warnings: Error[] = []
    const onWarning = (warning: Error) => warnings.push(warning)
    process.on('warning', onWarning)
    const controller = new AbortController()
    for (let i = 0; i < 30; i++) host.scripted.push('hang')
    // started together, so all 30 setup windows (persona) are open at once too
    const runs = await Promise.all(
      Array.from({ length: 30 }, () => host.root.inprocessRun.spawn(request({ signal: controller.signal, persona: 'one of many' }))),
    )
    controller.abort()
    for (const run of runs) expect((await settles(run.result, 'run.result')).stopReason).to.equal('aborted')
    await Promise.all(runs.map((run) => run.dispose()))
    await new Promise<void>((resolve) => setImmediate(resolve))
    process.off('warning', onWarning)
    expect(warnings.map(String)).to.deep.equal([])
  })
})
