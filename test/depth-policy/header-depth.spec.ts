import { expect } from 'chai'
import { SubagentDepthError } from '../../lib/errors.ts'
import DepthPolicy from '../../plugins/depth-policy/index.ts'
import { createDriverHost } from '../support/driver.ts'
import { rejectionOf } from '../support/scene.ts'

describe('DepthPolicy and a header depth (SPEC §4)', () => {
  it('caps from the parent header depth, which runtime options cannot lower', async () => {
    const host = await createDriverHost()
    await host.load(DepthPolicy, { maxDepth: 2 })
    const { agent: parent } = await host.create({ header: { delegationDepth: 2 }, agentOptions: { subagentDepth: 0 } })
    const error = await rejectionOf(host.root.inprocessRun.spawn(host.request({ parent })))
    expect(error).to.be.instanceOf(SubagentDepthError)
    expect([error.message, parent.session.header.delegationDepth]).to.deep.equal(['subagent depth 3 exceeds maxDepth 2', 2])
  })

  it('starts the child of a deep parent at its header depth plus one, exactly at the cap', async () => {
    const host = await createDriverHost()
    await host.load(DepthPolicy, { maxDepth: 3 })
    const { agent: parent } = await host.create({ header: { delegationDepth: 2 }, agentOptions: { subagentDepth: 0 } })
    host.scripted.push({ text: 'ok' })
    const run = await host.root.inprocessRun.spawn(host.request({ parent }))
    expect([run.agent.session.header.delegationDepth, run.agent.options.subagentDepth]).to.deep.equal([3, 3])
    expect((await run.result).stopReason).to.equal('completed')
    await run.dispose()
  })
})
