import { expect } from 'chai'
import DepthPolicy from '../../plugins/depth-policy/index.ts'
import type { Context } from 'cordis'
import type { Agent, SubagentRun } from '../../lib/types.ts'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import { createDriverHost, createGate } from '../support/driver.ts'
import { scene } from '../support/scene.ts'

describe('InProcessRun ownership and disposal (SPEC §2.5)', () => {
  it('disposes idempotently and leaves nothing behind', async () => {
    const host = await createDriverHost()
    const base = host.snapshot()
    host.scripted.push({ text: 'ok' })
    const run = await host.root.inprocessRun.spawn(host.request({ persona: 'scoped persona' }))
    await run.result
    const first = run.dispose()
    expect(run.dispose()).to.equal(first)
    await first
    await run.dispose()
    expect(host.root.agents.get(run.id)).to.equal(undefined)
    expect(host.root.sessions.get(run.id)).to.equal(undefined)
    expect(host.snapshot()).to.deep.equal(base)
  })

  it('settles a run disposed during a hanging model call as aborted', async () => {
    const host = await createDriverHost()
    const base = host.snapshot()
    host.scripted.push('hang')
    const run = await host.root.inprocessRun.spawn(host.request())
    await run.dispose()
    const result = await run.result
    expect(result.stopReason).to.equal('aborted')
    expect(host.snapshot()).to.deep.equal(base)
  })

  it('is cancelled when the parent is disposed', async () => {
    const host = await createDriverHost()
    const parent = await host.root.agents.create({ agentOptions: { provider: 'scripted', model: 'm' } })
    host.scripted.push('hang')
    const run = await host.root.inprocessRun.spawn(host.request({ parent: parent.agent }))
    await parent.dispose()
    expect((await run.result).stopReason).to.equal('aborted')
    expect(host.root.agents.get(run.id)).to.equal(undefined)
    await run.dispose()
  })

  it('survives unloading the plugin that started it (SPEC §2.5)', async () => {
    const host = await createDriverHost()
    const gate = createGate()
    host.root.models.register('gated', gate.adapter)
    let started!: Promise<SubagentRun>
    const starter = host.load({
      inject: ['inprocessRun'],
      apply(ctx: Context) {
        started = ctx.inprocessRun.spawn(host.request({ agentOptions: { provider: 'gated' } }))
      },
    })
    await starter
    const run = await started
    await gate.entered
    await starter.dispose()
    expect(run.agent.status).to.equal('running')
    gate.open('finished anyway')
    expect((await run.result).stopReason).to.equal('completed')
    await run.dispose()
  })

  for (const name of ['InProcessRun', 'DepthPolicy'] as const) {
    it(`survives unloading ${name} mid-run`, async () => {
      const host = await createDriverHost()
      const gate = createGate()
      host.root.models.register('gated', gate.adapter)
      const fiber = name === 'InProcessRun' ? undefined : host.load(DepthPolicy, { maxDepth: 3 })
      if (fiber) await fiber
      const runner = host.root.inprocessRun
      const run = await runner.spawn(host.request({ agentOptions: { provider: 'gated' } }))
      await gate.entered
      if (fiber) await fiber.dispose()
      else {
        await host.fibers[0]!.dispose()
        host.baseline = host.snapshots[0]!
      }
      gate.open('finished anyway')
      expect(await run.result).to.deep.equal({
        output: [{ type: 'text', text: 'finished anyway' }],
        stopReason: 'completed',
        usage: { inputTokens: 2, outputTokens: 1 },
      })
      await run.dispose()
      expect(host.root.agents.get(run.id)).to.equal(undefined)
    })
  }
})

describe('DepthPolicy (SPEC §4)', () => {
  it('caps depth at 3 by default', async () => {
    const host = await createDriverHost({ subagentDepth: 3 })
    await host.load(DepthPolicy)
    let error: Error | undefined
    await host.root.inprocessRun.spawn(host.request()).catch((e) => (error = e))
    expect(error?.message).to.equal('subagent depth 4 exceeds maxDepth 3')
  })

  it('rejects a bad config with a validation error naming the field', async () => {
    const host = await createDriverHost()
    let error: Error | undefined
    await Promise.resolve(host.load(DepthPolicy, { maxDepth: -1 })).catch((e) => (error = e))
    expect(error?.message).to.match(/maxDepth/)
  })

  it('applies a config update to the next start without touching running children', async () => {
    const host = await createDriverHost()
    const gate = createGate()
    host.root.models.register('gated', gate.adapter)
    const fiber = host.load(DepthPolicy, { maxDepth: 3 })
    await fiber
    const run = await host.root.inprocessRun.spawn(host.request({ agentOptions: { provider: 'gated' } }))
    await gate.entered
    await fiber.update({ maxDepth: 0 })
    let error: Error | undefined
    await host.root.inprocessRun.spawn(host.request()).catch((e) => (error = e))
    expect(error?.message).to.equal('subagent depth 1 exceeds maxDepth 0')
    gate.open()
    expect((await run.result).stopReason).to.equal('completed')
    await run.dispose()
  })

  it('never raises a cap the request lowered', async () => {
    const host = await createDriverHost()
    await host.load(DepthPolicy, { maxDepth: 10 })
    let error: Error | undefined
    await host.root.inprocessRun.spawn(host.request({ maxDepth: 0 })).catch((e) => (error = e))
    expect(error?.message).to.equal('subagent depth 1 exceeds maxDepth 0')
  })
})

describe('InProcessRun ownership: a parent disposed at publication (found by the reliability suites)', () => {
  it('settles a run as aborted when its parent is disposed as the child is published', async () => {
    // guards against what happened without it: run.result rejected with `agent "<id>" is disposed`, as if the driver had failed
    const host = await scene({ plugins: [InProcessRun] })
    const baseline = host.snapshot()
    const parent = await host.root.agents.create({ agentOptions: { provider: 'scripted', model: 'test' } })
    const off = host.on('agent/created', (agent: Agent) => {
      if (agent.id !== parent.agent.id) void parent.dispose()
    })
    const run = await host.root.inprocessRun.spawn({ parent: parent.agent, prompt: 'task', signal: new AbortController().signal })
    off()
    expect(await run.result).to.deep.equal({
      output: [],
      stopReason: 'aborted',
      diagnostic: 'the run was cancelled',
      diagnosticText: { key: 'cancelled', params: {} },
    })
    expect(run.isCancelled).to.equal(true)
    await run.dispose()
    await parent.dispose()
    expect(host.scripted.requests).to.have.length(0)
    expect(host.snapshot()).to.deep.equal(baseline)
  })
})
