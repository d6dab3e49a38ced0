import { expect } from 'chai'
import type { Agent, SubagentStartRequest } from '../../lib/types.ts'
import { createDriverHost } from '../support/driver.ts'
import { rejectionOf } from '../support/scene.ts'

/** `request` behind a proxy that counts the reads of each field. */
function counted(request: SubagentStartRequest): { request: SubagentStartRequest; reads: Map<PropertyKey, number> } {
  const reads = new Map<PropertyKey, number>()
  const proxy = new Proxy(request, {
    get(target, key, receiver) {
      reads.set(key, (reads.get(key) ?? 0) + 1)
      return Reflect.get(target, key, receiver)
    },
  })
  return { request: proxy, reads }
}

describe('InProcessRun reads a request once (SPEC §2.1 snapshot)', () => {
  it('creates the child under the parent its entry checked when the parent getter answers another agent later', async () => {
    const host = await createDriverHost()
    // an agent already at depth 1: a child of it would be past maxDepth 1
    const capped: Agent = await host.agent({ subagentDepth: 1 })
    let reads = 0
    const request = { prompt: 'do the task', signal: new AbortController().signal, maxDepth: 1 } as SubagentStartRequest
    Object.defineProperty(request, 'parent', { enumerable: true, get: () => (++reads <= 2 ? host.parent : capped) })
    host.scripted.push({ text: 'done' })
    const run = await host.root.inprocessRun.spawn(request)
    expect(run.agent.session.header).to.include({ parentSession: host.parent.id, delegationDepth: 1 })
    expect(reads).to.equal(1)
    await run.result
    await run.dispose()
  })

  it('reads each request field exactly once on a spawn that uses them all', async () => {
    const host = await createDriverHost()
    const { request, reads } = counted(
      host.request({
        label: 'reader',
        persona: 'careful',
        agentOptions: { maxSteps: 3 },
        toolFilter: { deny: [] },
        maxDepth: 4,
        inheritRestrictions: true,
        callId: 'call-1',
      }),
    )
    host.scripted.push({ text: 'done' })
    const run = await host.root.inprocessRun.spawn(request)
    await run.result
    const fields = ['parent', 'prompt', 'signal', 'label', 'persona', 'agentOptions', 'toolFilter', 'maxDepth', 'inheritRestrictions', 'callId']
    for (const field of fields) expect([field, reads.get(field)]).to.deep.equal([field, 1])
    await run.dispose()
  })

  it('reads the parent once on a fork and seeds the child from that parent', async () => {
    const host = await createDriverHost()
    const { request, reads } = counted(host.request())
    host.scripted.push({ text: 'done' })
    const run = await host.root.inprocessRun.fork(request)
    await run.result
    expect(reads.get('parent')).to.equal(1)
    expect(run.agent.session.header.seedLength).to.equal(0)
    await run.dispose()
  })

  it('sends the prompt the entry checked, not one a getter answers after it', async () => {
    const host = await createDriverHost()
    let reads = 0
    const request = host.request()
    Object.defineProperty(request, 'prompt', { enumerable: true, get: () => (++reads === 1 ? 'checked' : 42) })
    host.scripted.push({ text: 'done' })
    const run = await host.root.inprocessRun.spawn(request)
    await run.result
    const first = run.agent.session.events.find((event) => event.type === 'user/message')
    expect(first?.data).to.deep.include({ content: [{ type: 'text', text: 'checked' }] })
    await run.dispose()
  })

  it('names a request field whose getter throws', async () => {
    const host = await createDriverHost()
    const request = host.request()
    Object.defineProperty(request, 'label', {
      enumerable: true,
      get: () => {
        throw new Error('no label')
      },
    })
    const error = await rejectionOf(host.root.inprocessRun.spawn(request))
    expect(error).to.be.instanceOf(TypeError)
    expect(error.message).to.equal('subagent request label could not be read: no label')
  })

  it('keeps what prepare listeners saw: the plan request is a frozen copy of plain data', async () => {
    const host = await createDriverHost()
    const agentOptions = { maxSteps: 3 }
    let seen: Readonly<SubagentStartRequest> | undefined
    const dispose = host.on('subagent/prepare', (plan) => {
      seen = plan.request
    })
    host.scripted.push({ text: 'done' })
    const run = await host.root.inprocessRun.spawn(host.request({ agentOptions }))
    agentOptions.maxSteps = 99
    expect(Object.isFrozen(seen)).to.equal(true)
    expect(seen?.agentOptions).to.deep.equal({ maxSteps: 3 })
    expect(seen?.agentOptions).to.not.equal(agentOptions)
    dispose()
    await run.result
    await run.dispose()
  })
  it('hands prepare the same frozen copy of an output schema object reused unchanged, and a fresh one once it changed', async () => {
    const host = await createDriverHost()
    const seen: unknown[] = []
    const dispose = host.on('subagent/prepare', (plan) => {
      seen.push(plan.request.outputSchema)
      plan.claim('outputSchema')
    })
    const outputSchema = { type: 'object', properties: { answer: { type: 'string' } } }
    for (let i = 0; i < 3; i++) {
      if (i === 2) outputSchema.properties.answer.type = 'number'
      host.scripted.push({ text: 'done' })
      const run = await host.root.inprocessRun.spawn(host.request({ outputSchema }))
      await run.result
      await run.dispose()
    }
    expect(seen[0]).to.not.equal(outputSchema)
    expect(Object.isFrozen((seen[0] as typeof outputSchema).properties.answer)).to.equal(true)
    expect(seen[1]).to.equal(seen[0])
    expect(seen[2]).to.not.equal(seen[0])
    expect(seen[2]).to.deep.equal({ type: 'object', properties: { answer: { type: 'number' } } })
    dispose()
  })
})
