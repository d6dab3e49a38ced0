import { expect } from 'chai'
import InProcessRun from '../plugins/inprocess-run/index.ts'
import { createHost } from './support/harness.ts'
describe('driver smoke', () => {
  it('spawns and forks', async () => {
    const host = await createHost()
    await host.root.plugin(InProcessRun)
    const parent = await host.agent()
    host.scripted.push({ text: 'parent answer' })
    parent.followup('hello'); await parent.whenIdle()
    host.scripted.push({ text: 'child ok', usage: { inputTokens: 3, outputTokens: 1 } })
    const base = host.snapshot()
    const run = await host.root.inprocessRun.spawn({ parent, prompt: 'task 1', signal: new AbortController().signal })
    expect(host.root.agents.get(run.id)).to.equal(run.agent)
    console.log(await run.result)
    await run.dispose()
    host.scripted.push({ text: 'fork ok' })
    const fork = await host.root.inprocessRun.fork({ parent, prompt: 'task 2', signal: new AbortController().signal })
    console.log(await fork.result, fork.agent.session.header, host.scripted.requests.at(-1)!.messages)
    await fork.dispose()
    console.log(base, host.snapshot(), host.logged())
  })
})
