import { getEventListeners } from 'node:events'
import { expect } from 'chai'
import type { Agent, SubagentPlan, Usage } from '../../lib/types.ts'
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

  it('calls a ticket held at admission once as the result settles, and sets its answer as treeUsage', async () => {
    const host = await createDriverHost()
    const calls: string[] = []
    const offAdmit = host.root.on('subagent/admit', (plan: SubagentPlan) =>
      plan.hold({
        settled: () => {
          calls.push('settled')
          return { inputTokens: 40, outputTokens: 2 }
        },
      }),
    )
    const offSettle = host.root.on('subagent/settle', async (result, _run, next) => {
      calls.push(`settle listener saw ${JSON.stringify(result.treeUsage)}`)
      return next()
    })
    host.scripted.push({ text: 'ok', usage: { inputTokens: 5, outputTokens: 1 } })
    const run = await host.root.inprocessRun.spawn(host.request())
    const result = await run.result
    offAdmit()
    offSettle()
    expect(calls).to.deep.equal(['settled', 'settle listener saw {"inputTokens":40,"outputTokens":2}'])
    expect(result).to.deep.equal({
      output: [{ type: 'text', text: 'ok' }],
      stopReason: 'completed',
      usage: { inputTokens: 5, outputTokens: 1 },
      treeUsage: { inputTokens: 40, outputTokens: 2 },
    })
    await run.dispose()
    expect(calls).to.have.length(2)
  })

  it('calls every held ticket in order and keeps the first answer as treeUsage', async () => {
    const host = await createDriverHost()
    const calls: string[] = []
    const answer = (name: string, usage: Usage) => {
      calls.push(name)
      return usage
    }
    const offAdmit = host.root.on('subagent/admit', (plan: SubagentPlan) => {
      plan.hold({ settled: () => void calls.push('first') })
      plan.hold({ settled: () => answer('second', { inputTokens: 1, outputTokens: 1 }) })
      plan.hold({ settled: () => answer('third', { inputTokens: 9, outputTokens: 9 }) })
    })
    host.scripted.push({ text: 'ok' })
    const run = await host.root.inprocessRun.spawn(host.request())
    const result = await run.result
    offAdmit()
    expect(calls).to.deep.equal(['first', 'second', 'third'])
    expect(result.treeUsage).to.deep.equal({ inputTokens: 1, outputTokens: 1 })
    await run.dispose()
  })

  it('calls a held ticket when the result rejects, and keeps the rejection', async () => {
    const host = await createDriverHost()
    let settled = 0
    const offAdmit = host.root.on('subagent/admit', (plan: SubagentPlan) => plan.hold({ settled: () => void settled++ }))
    const offSetup = host.root.on('subagent/setup', (child: Agent) => {
      ;(child as unknown as { followup: () => void }).followup = () => {
        throw new Error('queue is broken')
      }
    })
    const run = await host.root.inprocessRun.spawn(host.request())
    offAdmit()
    offSetup()
    const error = await run.result.then(
      () => undefined,
      (reason: Error) => reason,
    )
    expect([error?.message, settled]).to.deep.equal(['queue is broken', 1])
    await run.dispose()
  })

  it("rejects the result with a ticket's throw and still calls the tickets held after it", async () => {
    const host = await createDriverHost()
    const ends: unknown[] = []
    let later = 0
    const offAdmit = host.root.on('subagent/admit', (plan: SubagentPlan) => {
      plan.hold({
        settled: () => {
          throw new Error('ticket broke')
        },
      })
      plan.hold({ settled: () => void later++ })
    })
    const offEnd = host.root.on('subagent/end', (info) => void ends.push(info.error))
    host.scripted.push({ text: 'ok' })
    const run = await host.root.inprocessRun.spawn(host.request())
    const error = await run.result.then(
      () => undefined,
      (reason: Error) => reason,
    )
    offAdmit()
    offEnd()
    expect([error?.message, later, ends]).to.deep.equal(['ticket broke', 1, ['ticket broke']])
    await run.dispose()
  })

  it('never calls the ticket of a start rejected after admission', async () => {
    const host = await createDriverHost()
    const controller = new AbortController()
    let settled = 0
    const offAdmit = host.root.on('subagent/admit', (plan: SubagentPlan) => {
      plan.hold({ settled: () => void settled++ })
      controller.abort()
    })
    const error = await host.root.inprocessRun.spawn(host.request({ signal: controller.signal })).then(
      () => undefined,
      (reason: Error) => reason,
    )
    offAdmit()
    expect([error?.message, settled]).to.deep.equal(['subagent request was aborted before child publication', 0])
  })
  it('rejects at once when the signal aborts while an admit listener that ignores it is still waiting', async () => {
    const host = await createDriverHost()
    const controller = new AbortController()
    const offAdmit = host.root.on('subagent/admit', () => new Promise<void>(() => {}))
    const starting = host.root.inprocessRun.spawn(host.request({ signal: controller.signal }))
    controller.abort()
    const error = await starting.then(
      () => undefined,
      (reason: Error) => reason,
    )
    offAdmit()
    expect(error?.message).to.equal('subagent request was aborted before child publication')
    expect(host.root.agents.list()).to.deep.equal([host.parent])
  })

  it('emits subagent/abandon once, after the listener is done, for a start the abort cut short', async () => {
    const host = await createDriverHost()
    const controller = new AbortController()
    const log: string[] = []
    let letIn!: () => void
    const offAdmit = host.root.on('subagent/admit', () =>
      new Promise<void>((resolve) => (letIn = resolve)).then(() => void log.push('booked')),
    )
    const offAbandon = host.root.on('subagent/abandon', (_plan: SubagentPlan, error: Error) => void log.push(`abandoned: ${error.message}`))
    const starting = host.root.inprocessRun.spawn(host.request({ signal: controller.signal }))
    controller.abort()
    await starting.catch(() => undefined)
    expect(log).to.deep.equal([])
    letIn()
    await new Promise(setImmediate)
    offAdmit()
    offAbandon()
    expect(log).to.deep.equal(['booked', 'abandoned: subagent request was aborted before child publication'])
    expect(host.root.agents.list()).to.deep.equal([host.parent])
  })
  it('adds one abort listener to a signal however many starts wait for admission on it', async () => {
    const host = await createDriverHost()
    const controller = new AbortController()
    const offAdmit = host.root.on('subagent/admit', () => new Promise<void>(() => {}))
    const starts = Array.from({ length: 8 }, () => host.root.inprocessRun.spawn(host.request({ signal: controller.signal })))
    const listening = getEventListeners(controller.signal, 'abort').length
    controller.abort()
    const outcomes = await Promise.allSettled(starts)
    offAdmit()
    expect([listening, getEventListeners(controller.signal, 'abort').length]).to.deep.equal([1, 0])
    expect(outcomes.map((outcome) => (outcome.status === 'rejected' ? (outcome.reason as Error).message : 'fulfilled'))).to.deep.equal(
      Array(8).fill('subagent request was aborted before child publication'),
    )
  })

  it('leaves no abort listener on the signal once every start waiting on it was admitted', async () => {
    const host = await createDriverHost()
    const controller = new AbortController()
    let letIn!: () => void
    const admitted = new Promise<void>((resolve) => (letIn = resolve))
    const offAdmit = host.root.on('subagent/admit', () => admitted)
    for (let i = 0; i < 3; i++) host.scripted.push({ text: 'ok' })
    const starts = Array.from({ length: 3 }, () => host.root.inprocessRun.spawn(host.request({ signal: controller.signal })))
    letIn()
    const runs = await Promise.all(starts)
    offAdmit()
    // the runs' own cancel listener goes as their results settle (SPEC §2.3): nothing of the wait
    // for admission may stay beside it
    await Promise.all(runs.map((run) => run.result))
    expect(getEventListeners(controller.signal, 'abort')).to.have.length(0)
    await Promise.all(runs.map((run) => run.dispose()))
  })
})
