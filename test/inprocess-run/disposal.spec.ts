import { expect } from 'chai'
import DepthPolicy from '../../plugins/depth-policy/index.ts'
import { createDriverHost, createGate } from '../support/driver.ts'

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
