import { expect } from 'chai'
import type { Agent, SubagentPlan } from '../../lib/types.ts'
import { createDriverHost } from '../support/driver.ts'

describe('InProcessRun admission (subagent/admit)', () => {
  it('gives the child the id the plan named at entry', async () => {
    const host = await createDriverHost()
    const named: string[] = []
    const off = host.root.on('subagent/prepare', (plan: SubagentPlan) => void named.push(plan.childId))
    host.scripted.push({ text: 'ok' })
    const run = await host.root.inprocessRun.spawn(host.request())
    off()
    expect(named).to.deep.equal([run.id])
    await run.dispose()
  })

  it('publishes the child before start returns when every admit listener answers at once', async () => {
    const host = await createDriverHost()
    const created: Agent[] = []
    const offAdmit = host.root.on('subagent/admit', () => {})
    const offCreated = host.root.on('agent/created', (agent: Agent) => void created.push(agent))
    host.scripted.push({ text: 'ok' })
    const starting = host.root.inprocessRun.spawn(host.request())
    expect(created.map((agent) => agent.session.header.parentSession)).to.deep.equal([host.parent.id])
    const run = await starting
    offAdmit()
    offCreated()
    expect(run.agent).to.equal(created[0])
    await run.dispose()
  })

  it('waits for an admit listener that answers with a promise, then creates the child', async () => {
    const host = await createDriverHost()
    let letIn!: () => void
    const admitted = new Promise<void>((resolve) => (letIn = resolve))
    const created: Agent[] = []
    const offAdmit = host.root.on('subagent/admit', () => admitted)
    const offCreated = host.root.on('agent/created', (agent: Agent) => void created.push(agent))
    host.scripted.push({ text: 'ok' })
    const starting = host.root.inprocessRun.spawn(host.request())
    expect(created).to.deep.equal([])
    letIn()
    const run = await starting
    offAdmit()
    offCreated()
    expect(created).to.deep.equal([run.agent])
    await run.dispose()
  })

  it('rejects as an abort before publication when an admit listener aborts the signal', async () => {
    const host = await createDriverHost()
    const controller = new AbortController()
    const abandoned: SubagentPlan[] = []
    const offAdmit = host.root.on('subagent/admit', () => controller.abort())
    const offAbandon = host.root.on('subagent/abandon', (plan: SubagentPlan) => void abandoned.push(plan))
    const error = await host.root.inprocessRun.spawn(host.request({ signal: controller.signal })).then(
      () => undefined,
      (reason: unknown) => reason,
    )
    offAdmit()
    offAbandon()
    expect((error as Error).message).to.equal('subagent request was aborted before child publication')
    expect(abandoned).to.have.length(1)
    expect(host.root.agents.list()).to.deep.equal([host.parent])
  })
})
