import { expect } from 'chai'
import type { SubagentPlan } from '../../lib/types.ts'
import { createDriverHost } from '../support/driver.ts'
import { rejectionOf } from '../support/scene.ts'

describe('plan.recordHeader (a plugin records a field of the child header)', () => {
  it('puts the recorded agent and approval into the child session header', async () => {
    const host = await createDriverHost()
    const approval = { default: 'ask', rules: [{ tool: 'shell', decision: 'deny' }] }
    host.on('subagent/prepare', (plan: SubagentPlan) => {
      plan.recordHeader('agent', 'reviewer')
      plan.recordHeader('approval', approval)
    })
    host.scripted.push({ text: 'ok' })
    const run = await host.root.inprocessRun.spawn(host.request())
    await run.result
    expect(run.agent.session.header.agent).to.equal('reviewer')
    expect(run.agent.session.header.approval).to.deep.equal(approval)
    await run.dispose()
  })

  it('reads back what was recorded, a later record replacing an earlier one', async () => {
    const host = await createDriverHost()
    const seen: unknown[] = []
    host.on('subagent/prepare', (plan: SubagentPlan) => {
      seen.push(plan.recordedHeader)
      plan.recordHeader('agent', 'first')
      plan.recordHeader('agent', 'second')
      seen.push(plan.recordedHeader)
    })
    host.scripted.push({ text: 'ok' })
    const run = await host.root.inprocessRun.spawn(host.request())
    await run.result
    expect(seen).to.deep.equal([undefined, { agent: 'second' }])
    expect(run.agent.session.header.agent).to.equal('second')
    await run.dispose()
  })

  const bad: [string, 'agent' | 'approval', unknown, string][] = [
    ['an agent that is not a definition name', 'agent', 'Not A Name', 'subagent header agent must be a definition name matching /^[a-z][a-z0-9-]{0,63}$/'],
    ['a malformed approval', 'approval', { default: 'nope' }, 'subagent header approval default must be "allow", "ask" or "deny", not "nope"'],
    ['another field', 'delegationDepth' as 'agent', 0, 'subagent header field "delegationDepth" cannot be recorded (only "agent" and "approval")'],
  ]
  for (const [what, field, value, message] of bad) {
    it(`rejects the start with a TypeError for ${what}, creating nothing`, async () => {
      const host = await createDriverHost()
      const base = host.snapshot()
      host.on('subagent/prepare', (plan: SubagentPlan) => plan.recordHeader(field, value))
      const error = await rejectionOf(host.root.inprocessRun.spawn(host.request()))
      expect(error).to.be.instanceOf(TypeError)
      expect(error.message).to.equal(message)
      expect(host.snapshot().agents).to.equal(base.agents)
    })
  }
})

describe('SubagentStartRequest.approval at entry (SPEC §11.1, §2.1)', () => {
  it('rejects a malformed approval with a TypeError at step 0, listing every problem', async () => {
    const host = await createDriverHost()
    const error = await rejectionOf(host.root.inprocessRun.spawn(host.request({ approval: { defualt: 'ask', readOnly: 'x' } as never })))
    expect(error).to.be.instanceOf(TypeError)
    expect(error.message).to.equal(
      'subagent request approval has unknown key "defualt" (did you mean "default"?); subagent request approval readOnly must be "allow", "ask" or "deny", not "x"',
    )
  })

  it('rejects an approval no loaded plugin serves as an unsupported capability', async () => {
    const host = await createDriverHost()
    const error = await rejectionOf(host.root.inprocessRun.spawn(host.request({ approval: { default: 'ask' } })))
    expect(error.message).to.equal('subagent runtime does not support the "approval" capability')
  })
})
