import { expect } from 'chai'
import type { Fiber } from 'cordis'
import Host from '../../plugins/host/index.ts'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import { eventsOf } from '../support/harness.ts'
import { type Scene, scene } from '../support/scene.ts'

/** The host's own fiber (the scene applies it before anything else). */
function hostFiber(host: Scene): Fiber {
  // a runtime's fibers are a list cordis iterates, not an array
  for (const fiber of host.root.registry.get(Host)?.fibers ?? []) return fiber
  throw new Error('no Host fiber')
}

describe('Host: a config update (hot reload)', () => {
  // cordis's restart disposed every live agent and run for a new maxSteps
  it('keeps every live agent and run across a maxSteps update', async () => {
    const host = await scene({ maxSteps: 16, plugins: [InProcessRun] })
    const parent = await host.agent()
    host.scripted.push('hang')
    const run = await host.root.inprocessRun.spawn({ parent, prompt: 'work', signal: new AbortController().signal })
    await hostFiber(host).update({ maxSteps: 4 })
    expect([host.root.agents.get(parent.id), host.root.agents.get(run.id)]).to.deep.equal([parent, run.agent])
    run.agent.cancel({ kind: 'user' })
    expect((await run.result).stopReason).to.equal('aborted')
    await run.dispose()
  })

  it('applies the new maxSteps to the next turn', async () => {
    const host = await scene({ maxSteps: 16 })
    const agent = await host.agent()
    await hostFiber(host).update({ maxSteps: 1 })
    host.scripted.push({ toolCalls: [{ name: 'missing', arguments: '{}' }] })
    agent.followup('go')
    await agent.whenIdle()
    expect(eventsOf(agent, 'turn/end')).to.deep.equal([
      { turn: 1, reason: { kind: 'error', error: { message: 'turn exceeded maxSteps 1', code: 'MAX_STEPS' } } },
    ])
  })
})
