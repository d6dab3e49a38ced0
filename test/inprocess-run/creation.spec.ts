import { getEventListeners } from 'node:events'
import { expect } from 'chai'
import sinon from 'sinon'
import { rawService } from '../../cordis-glue/bridge.ts'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import type { CreateOptions } from '../../plugins/host/index.ts'
import type { AgentHandle } from '../../lib/types.ts'
import { createDriverHost } from '../support/driver.ts'
import { deoptimize, heapAfterGc, inYoungGeneration } from '../support/heap.ts'

describe('InProcessRun creation (SPEC §2.2)', () => {
  it('gives the child a header with lineage, origin and depth', async () => {
    const host = await createDriverHost()
    const parent = (await host.create({ header: { cwd: '/work' }, agentOptions: { model: 'm' } })).agent
    host.scripted.push({ text: 'ok' })
    const run = await host.root.inprocessRun.spawn(host.request({ parent }))
    const { id, createdAt, ...header } = run.agent.session.header
    expect(id).to.equal(run.id)
    expect(createdAt).to.be.a('number')
    expect(header).to.deep.equal({
      cwd: '/work',
      parentSession: parent.id,
      origin: 'subagent',
      delegationDepth: 1,
      // the options it runs with, so a resume can call its model again (SPEC §14)
      agentOptions: { provider: 'scripted', model: 'm', subagentDepth: 1 },
    })
    await run.dispose()
  })

  it('inherits only provider, model and maxTokens, lets the request override, and sets the depth', async () => {
    const host = await createDriverHost({ maxTokens: 100, maxSteps: 7, custom: 'kept by the parent' })
    host.scripted.push({ text: 'ok' })
    const run = await host.root.inprocessRun.spawn(host.request({ agentOptions: { model: 'other', maxSteps: 3 } }))
    expect({ ...run.agent.options }).to.deep.equal({
      provider: 'scripted',
      model: 'other',
      maxTokens: 100,
      maxSteps: 3,
      subagentDepth: 1,
    })
    expect(Object.isFrozen(run.agent.options)).to.equal(true)
    await run.dispose()
  })

  it('creates the child through the parent, so disposing the parent disposes it', async () => {
    const host = await createDriverHost()
    host.scripted.push('hang')
    const run = await host.root.inprocessRun.spawn(host.request())
    const parentHandle = await host.root.agents.create({ agentOptions: { provider: 'scripted', model: 'm' } })
    host.scripted.push('hang')
    const owned = await host.root.inprocessRun.spawn(host.request({ parent: parentHandle.agent }))
    await parentHandle.dispose()
    expect(host.root.agents.get(owned.id)).to.equal(undefined)
    expect((await owned.result).stopReason).to.equal('aborted')
    await run.dispose()
  })

  it('hands the creation a setup function in the young generation when the start runs as unoptimized code', async () => {
    // a closure V8 pretenured would stay, dead, in the old generation and hold the whole start
    // (plan, request, the run's hand-off) through every scavenge until the next full GC
    const host = await createDriverHost()
    const agents = rawService(host.root.agents)
    const young: boolean[] = []
    const create = agents.create
    sinon.stub(agents, 'create').callsFake(function (this: typeof agents, options?: CreateOptions) {
      if (options?.setup) young.push(inYoungGeneration(options.setup))
      return create.call(this, options)
    })
    // the creation's own method is private: reached through the prototype, as V8 sees it
    deoptimize((InProcessRun.prototype as unknown as { create: () => unknown }).create)
    host.scripted.push({ text: 'ok' })
    try {
      const run = await host.root.inprocessRun.spawn(host.request({ persona: 'You are a careful reviewer.' }))
      await run.result
      await run.dispose()
    } finally {
      sinon.restore()
    }
    expect(young).to.deep.equal([true])
  })

  it('keeps no agent handle in a settled run, and its dispose still disposes the child', async () => {
    // a settled run lives as long as its caller holds it: the handle would be one more object each
    const host = await createDriverHost()
    const agents = rawService(host.root.agents)
    const create = agents.create
    let handle: WeakRef<AgentHandle> | undefined
    // a plain wrapper, not a sinon stub: a stub keeps every value it returned
    agents.create = function (this: typeof agents, options?: CreateOptions) {
      return create.call(this, options).then((made) => {
        handle = new WeakRef(made)
        return made
      })
    }
    host.scripted.push({ text: 'ok' })
    try {
      const run = await host.root.inprocessRun.spawn(host.request())
      await run.result
      // a WeakRef's target stays alive until the job that made (or read) it has ended
      await new Promise(setImmediate)
      await heapAfterGc()
      // the start made its handle through the wrapper: else the check below would pass on nothing
      expect(handle).to.be.instanceOf(WeakRef)
      expect(handle?.deref()).to.equal(undefined)
      await run.dispose()
      expect(host.root.agents.get(run.id)).to.equal(undefined)
      expect(host.root.sessions.get(run.id)).to.equal(undefined)
    } finally {
      agents.create = create
    }
  })

  it('scopes the persona to the child, shadowing the deployment persona', async () => {
    const host = await createDriverHost()
    host.root.systemPrompt.section({ name: 'persona', order: 0, text: 'You are the deployment.' })
    host.root.systemPrompt.section({ name: 'rules', order: 100, text: 'Be brief.' })
    host.scripted.push({ text: 'child' }, { text: 'parent' })
    const run = await host.root.inprocessRun.spawn(host.request({ persona: 'You are a careful reviewer.' }))
    await run.result
    host.parent.followup('hi')
    await host.parent.whenIdle()
    expect(host.scripted.requests[0].system).to.equal('You are a careful reviewer.\n\nBe brief.')
    expect(host.scripted.requests[1].system).to.equal('You are the deployment.\n\nBe brief.')
    await run.dispose()
  })

  it('hides filtered global tools from the child only', async () => {
    const host = await createDriverHost()
    for (const name of ['read', 'write']) {
      host.root.tools.register({ name, description: name, parameters: { type: 'object' }, execute: () => name })
    }
    host.scripted.push({ text: 'child' }, { text: 'parent' })
    const run = await host.root.inprocessRun.spawn(host.request({ toolFilter: { deny: ['write'] } }))
    await run.result
    host.parent.followup('hi')
    await host.parent.whenIdle()
    expect(host.scripted.requests[0].tools?.map((tool) => tool.name)).to.deep.equal(['read'])
    expect(host.scripted.requests[1].tools?.map((tool) => tool.name)).to.deep.equal(['read', 'write'])
    await run.dispose()
  })

  it('rejects an unknown name in the tool filter and leaves no trace', async () => {
    const host = await createDriverHost()
    void host.parent.ctx // the child's scope lives under the parent's: count the parent's first
    const base = host.snapshot()
    let error: Error | undefined
    await host.root.inprocessRun.spawn(host.request({ toolFilter: { allow: ['nope'] } })).catch((e) => (error = e))
    expect(error?.message).to.equal('unknown global tool "nope"')
    expect(host.snapshot()).to.deep.equal(base)
  })

  it('does not inherit the parent scoped registrations', async () => {
    const host = await createDriverHost()
    host.parent.ctx.tools.register({ name: 'private', description: 'p', parameters: { type: 'object' }, execute: () => 1 })
    host.scripted.push({ text: 'child' })
    const run = await host.root.inprocessRun.spawn(host.request())
    await run.result
    expect(host.scripted.requests[0]).to.not.have.property('tools')
    await run.dispose()
  })

  it('rejects the start with the error of a failing setup listener and publishes nothing', async () => {
    const host = await createDriverHost()
    void host.parent.ctx // the child's scope lives under the parent's: count the parent's first
    const base = host.snapshot()
    const off = host.on('subagent/setup', async (child) => {
      child.ctx.tools.register({ name: 'temp', description: 't', parameters: { type: 'object' }, execute: () => 1 })
      throw new Error('setup failed')
    })
    let error: Error | undefined
    await host.root.inprocessRun.spawn(host.request()).catch((e) => (error = e))
    expect(error?.message).to.equal('setup failed')
    off()
    expect(host.snapshot()).to.deep.equal(base)
  })

  it('awaits a subagent/setup listener that answers with a promise before publishing', async () => {
    const host = await createDriverHost()
    let open!: () => void
    const opened = new Promise<void>((resolve) => (open = resolve))
    const seen: unknown[] = []
    const off = host.on('subagent/setup', (child) => opened.then(() => void seen.push(host.root.agents.get(child.id))))
    host.scripted.push({ text: 'ok' })
    const started = host.root.inprocessRun.spawn(host.request())
    await Promise.resolve()
    open()
    const run = await started
    off()
    expect(seen).to.deep.equal([undefined])
    expect(host.root.agents.get(run.id)).to.equal(run.agent)
    await run.dispose()
  })

  it('keeps a setup window whose listeners answer at once off the request signal', async () => {
    const host = await createDriverHost()
    const controller = new AbortController()
    const listening: number[] = []
    const off = host.on('subagent/setup', () => void listening.push(getEventListeners(controller.signal, 'abort').length))
    host.scripted.push({ text: 'ok' })
    const run = await host.root.inprocessRun.spawn(host.request({ signal: controller.signal, persona: 'terse' }))
    off()
    expect(listening).to.deep.equal([0])
    await run.dispose()
  })

  it('seeds a fork with the parent events through its last completed turn', async () => {
    const host = await createDriverHost()
    host.scripted.push({ text: 'parent answer' })
    host.parent.followup('first')
    await host.parent.whenIdle()
    host.scripted.push({ text: 'forked answer' })
    const run = await host.root.inprocessRun.fork(host.request({ prompt: 'continue' }))
    const result = await run.result
    expect(run.agent.session.header.seedLength).to.equal(host.parent.session.events.length)
    expect(run.agent.session.events[host.parent.session.events.length].type).to.equal('session/end-seed')
    expect(host.scripted.requests[1].messages.map((m) => m.role)).to.deep.equal(['user', 'assistant', 'user'])
    expect(result.output).to.deep.equal([{ type: 'text', text: 'forked answer' }])
    await run.dispose()
  })

  it('forks a parent with no completed turn like a spawn', async () => {
    const host = await createDriverHost()
    host.scripted.push({ text: 'ok' })
    const run = await host.root.inprocessRun.fork(host.request())
    expect(run.agent.session.header.seedLength).to.equal(0)
    expect((await run.result).output).to.deep.equal([{ type: 'text', text: 'ok' }])
    await run.dispose()
  })
})

describe('InProcessRun creation: agentOptions keys (found by the reliability suites)', () => {
  it('keeps an own __proto__ key of agentOptions instead of dropping it', async () => {
    // guards against what happened without it: Object.assign ran the __proto__ setter, so the key was lost (and the options' prototype replaced)
    const host = await createDriverHost()
    const request = host.request
    host.scripted.push({ text: 'ok' })
    const run = await host.root.inprocessRun.spawn(request({ agentOptions: JSON.parse('{"__proto__":{"tier":"gold"}}') }))
    expect(Object.keys(run.agent.options)).to.include('__proto__')
    expect(Object.getPrototypeOf(run.agent.options)).to.equal(Object.prototype)
    await run.dispose()
  })
})
