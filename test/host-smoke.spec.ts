import { expect } from 'chai'
import { createHost } from './support/harness.ts'
describe('host smoke', () => {
  it('runs one scripted turn', async () => {
    const host = await createHost()
    const agent = await host.agent()
    host.scripted.push({ text: 'hi', usage: { inputTokens: 1, outputTokens: 1 } })
    agent.followup('hello')
    expect(agent.status).to.equal('running')
    await agent.whenIdle()
    console.log(agent.session.events.map((e) => `${e.seq} ${e.type} ${JSON.stringify(e.data)}`).join('\n'))
    console.log(host.snapshot(), host.logged())
  })
})
