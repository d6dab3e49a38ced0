import { getEventListeners } from 'node:events'
import { expect } from 'chai'
import type { Context } from 'cordis'
import type { Agent, AgentHandle, Session, SessionEvent } from '../../lib/types.ts'
import { rawService } from '../../cordis-glue/bridge.ts'
import { PluginOwnership } from '../../plugins/host/agents/plugin-ownership.ts'
import { deoptimize, heapAfterGc, inYoungGeneration } from '../support/heap.ts'
import { expectScopeCleared, rejectionOf, scene } from '../support/scene.ts'

/** Nests `1` `depth` levels deep in single-element arrays. */
function nested(depth: number): unknown {
  let value: unknown = 1
  for (let i = 0; i < depth; i++) value = [value]
  return value
}

const tool = { name: 'probe', description: 'probe', parameters: { type: 'object' }, execute: () => 'ok' }

/** A promise with its resolve function, for steering setup from the test. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void
  const promise = new Promise<void>((resolve) => (open = resolve))
  return { promise, open }
}

describe('agents.create: an already-aborted signal (SPEC §1.3 step 1)', () => {
  it('rejects with the reason when it is an Error, without running setup', async () => {
    const s = await scene()
    const reason = new Error('stop before start')
    const setup = () => expect.fail('setup ran')
    const error = await rejectionOf(s.create({ signal: AbortSignal.abort(reason), setup }))
    expect(error).to.equal(reason)
  })

  it('rejects with `agent "<id>" creation aborted` and the reason as cause otherwise', async () => {
    const s = await scene()
    const error = await rejectionOf(s.create({ sessionId: 'a1', signal: AbortSignal.abort('user left') }))
    expect(error.message).to.equal('agent "a1" creation aborted')
    expect(error.cause).to.equal('user left')
    expect(error.code).to.equal('CREATION_ABORTED')
  })

  it('emits nothing and publishes nothing', async () => {
    const s = await scene()
    const created: Agent[] = []
    s.on('agent/created', (agent: Agent) => {
      created.push(agent)
    })
    await rejectionOf(s.create({ sessionId: 'a1', signal: AbortSignal.abort() }))
    expect(created).to.deep.equal([])
    expect(s.root.agents.get('a1')).to.equal(undefined)
  })
})

describe('agents.create: the unpublished setup window (SPEC §1.3 steps 2–3)', () => {
  it('keeps the agent and its session out of get and list while setup runs', async () => {
    const s = await scene()
    const seen: unknown[] = []
    await s.create({
      sessionId: 'hidden',
      setup: () => {
        seen.push(s.root.agents.get('hidden'), s.root.agents.list().length, s.root.sessions.get('hidden'), s.root.sessions.list().length)
      },
    })
    expect(seen).to.deep.equal([undefined, 0, undefined, 0])
  })

  it('emits neither agent/created nor session/event during setup, even for appends', async () => {
    const s = await scene()
    const heard: string[] = []
    s.on('agent/created', () => {
      heard.push('agent/created')
    })
    s.on('session/event', (_session: Session, event: SessionEvent) => {
      heard.push(`session/event ${event.type}`)
    })
    await s.create({
      setup: (agent) => {
        agent.session.append('note', { during: 'setup' })
        heard.push('setup done')
      },
    })
    expect(heard).to.deep.equal(['setup done', 'agent/created'])
  })

  it('keeps what setup appended and registered once published', async () => {
    const s = await scene()
    const { agent } = await s.create({
      setup: (agent) => {
        agent.session.append('note', { during: 'setup' })
        agent.ctx.tools.register(tool)
      },
    })
    expect(agent.session.events.map((event) => event.type)).to.deep.equal(['note'])
    expect(s.root.tools.get('probe', agent)?.name).to.equal('probe')
  })

  it('awaits an async setup before publishing', async () => {
    const s = await scene()
    const step = gate()
    let isPublished = false
    const created = s.create({ sessionId: 'slow', setup: () => step.promise })
    created.then(() => (isPublished = true))
    await Promise.resolve()
    expect(s.root.agents.get('slow')).to.equal(undefined)
    step.open()
    await created
    expect(isPublished).to.equal(true)
    expect(s.root.agents.get('slow')).to.not.equal(undefined)
  })
})

describe('agents.create: an abort during setup (SPEC §1.3 step 3)', () => {
  for (const kind of ['a synchronous', 'an async'] as const) {
    it(`rejects with the abort's reason when ${kind} setup aborts the signal and then throws`, async () => {
      const s = await scene()
      const controller = new AbortController()
      const reason = new Error('aborted during setup')
      const body = () => {
        controller.abort(reason)
        throw new Error('setup failed after the abort')
      }
      const setup = kind === 'a synchronous' ? body : async () => body()
      expect(await rejectionOf(s.create({ signal: controller.signal, setup }))).to.equal(reason)
      expect(s.root.agents.list()).to.have.length(0)
    })
  }

  it('rejects with the reason when it is an Error, without waiting for setup', async () => {
    const s = await scene()
    const controller = new AbortController()
    const reason = new Error('parent gave up')
    const created = s.create({
      signal: controller.signal,
      setup: () => {
        controller.abort(reason)
        return new Promise<void>(() => {})
      },
    })
    expect(await rejectionOf(created)).to.equal(reason)
  })

  it('rejects with `agent "<id>" creation aborted` and the reason as cause for a non-Error reason', async () => {
    const s = await scene()
    const controller = new AbortController()
    const created = s.create({
      sessionId: 'c1',
      signal: controller.signal,
      setup: () => {
        controller.abort({ why: 'timeout' })
        return new Promise<void>(() => {})
      },
    })
    const error = await rejectionOf(created)
    expect(error.message).to.equal('agent "c1" creation aborted')
    expect(error.cause).to.deep.equal({ why: 'timeout' })
  })

  it('rejects when the signal aborts as setup finishes', async () => {
    const s = await scene()
    const controller = new AbortController()
    const created = s.create({
      sessionId: 'c2',
      signal: controller.signal,
      setup: () => {
        controller.abort('late')
      },
    })
    expect((await rejectionOf(created)).message).to.equal('agent "c2" creation aborted')
    expect(s.root.agents.get('c2')).to.equal(undefined)
  })

  it('tears down what setup registered before rejecting', async () => {
    const s = await scene()
    const controller = new AbortController()
    const order: string[] = []
    let child!: Agent
    const created = s.create({
      signal: controller.signal,
      setup: (agent) => {
        child = agent
        agent.ctx.tools.register(tool)
        agent.ctx.effect(() => () => order.push('scope unwound'))
        controller.abort(new Error('abort'))
        return new Promise<void>(() => {})
      },
    })
    await created.catch(() => order.push('rejected'))
    expect(order).to.deep.equal(['scope unwound', 'rejected'])
    expect(s.root.tools.get('probe', child)).to.equal(undefined)
  })
})

describe('agents.create: a setup that finishes at once', () => {
  it('adds no abort listener to the signal', async () => {
    const s = await scene()
    const controller = new AbortController()
    const listening: number[] = []
    await s.create({ signal: controller.signal, setup: () => void listening.push(getEventListeners(controller.signal, 'abort').length) })
    expect([listening, getEventListeners(controller.signal, 'abort').length]).to.deep.equal([[0], 0])
  })

  it('publishes before create returns its promise', async () => {
    const s = await scene()
    const created = s.create({ sessionId: 'at-once', setup: () => {} })
    const published = s.root.agents.get('at-once')
    expect(published).to.equal((await created).agent)
  })

  it('contains the late rejection of a setup promise that lost to the abort', async () => {
    const s = await scene()
    const controller = new AbortController()
    const late = gate()
    const reason = new Error('gave up')
    const created = s.create({
      signal: controller.signal,
      setup: async () => {
        controller.abort(reason)
        await late.promise
        throw new Error('setup failed after the abort')
      },
    })
    expect(await rejectionOf(created)).to.equal(reason)
    late.open()
    // the setup's rejection lands now: test/support/unhandled.ts fails the run if it goes unheard
    await new Promise<void>((resolve) => setImmediate(resolve))
  })
})

describe('agents.create: a failing setup (SPEC §1.3)', () => {
  it('rejects with the error setup threw', async () => {
    const s = await scene()
    const failure = new Error('setup broke')
    expect(
      await rejectionOf(
        s.create({
          setup: () => {
            throw failure
          },
        }),
      ),
    ).to.equal(failure)
  })

  it('rejects with the error an async setup rejected with', async () => {
    const s = await scene()
    const failure = new Error('async setup broke')
    expect(await rejectionOf(s.create({ setup: async () => Promise.reject(failure) }))).to.equal(failure)
  })

  it('tears down scoped tools, sections, listeners and the scope before rejecting', async () => {
    const s = await scene()
    const order: string[] = []
    let child!: Agent
    const created = s.create({
      sessionId: 'broken',
      setup: (agent) => {
        child = agent
        agent.ctx.tools.register(tool)
        agent.ctx.systemPrompt.section({ name: 'extra', order: 5, text: 'scoped text' })
        agent.ctx.on('tools/result', () => {})
        agent.ctx.effect(() => () => order.push('scope unwound'))
        throw new Error('setup broke')
      },
    })
    await created.catch(() => {
      order.push('rejected')
      order.push(`tool ${s.root.tools.get('probe', child) ? 'alive' : 'gone'}`)
      order.push(`section ${s.root.systemPrompt.assemble(child).text.includes('scoped text') ? 'alive' : 'gone'}`)
      order.push(`fibers ${s.snapshot().fibers === s.baseline.fibers ? 'at baseline' : 'leaked'}`)
    })
    expect(order).to.deep.equal(['scope unwound', 'rejected', 'tool gone', 'section gone', 'fibers at baseline'])
    expect(s.root.sessions.get('broken')).to.equal(undefined)
  })

  it('ends a turn that setup started before rejecting', async () => {
    const s = await scene()
    s.scripted.push('hang')
    let child!: Agent
    const created = s.create({
      setup: (agent) => {
        child = agent
        agent.followup('started too early')
        throw new Error('setup broke')
      },
    })
    await created.catch(() => {})
    expect(child.status).to.equal('idle')
    expect(s.scripted.requests[0].signal.aborted).to.equal(true)
    expect(child.session.events.at(-1)?.data).to.deep.equal({ turn: 1, reason: { kind: 'aborted', cause: { kind: 'disposed' } } })
  })

  it('leaves the id free for a later create', async () => {
    const s = await scene()
    await rejectionOf(
      s.create({
        sessionId: 'again',
        setup: () => {
          throw new Error('first try fails')
        },
      }),
    )
    const { agent } = await s.create({ sessionId: 'again' })
    expect(agent.id).to.equal('again')
  })
})

describe('agents.create: publication (SPEC §1.3 steps 4–5)', () => {
  it('publishes into sessions and agents, then emits agent/created, then resolves', async () => {
    const s = await scene()
    const order: string[] = []
    s.on('agent/created', (agent: Agent) => {
      order.push(`agent/created ${s.root.agents.get(agent.id) === agent} ${s.root.sessions.get(agent.id) === agent.session}`)
    })
    const handle = await s.create({ sessionId: 'p', setup: () => void order.push('setup') })
    order.push('resolved')
    expect(order).to.deep.equal(['setup', 'agent/created true true', 'resolved'])
    expect(handle.agent.id).to.equal('p')
  })

  it('ties a plugin-created agent to its plugin with a release function in the young generation', async () => {
    // a closure V8 pretenured (it does so from unoptimized code) would stay, dead after the
    // disposal, in the old generation and hold the record and its agent through every scavenge
    const s = await scene()
    deoptimize(PluginOwnership.prototype.bind)
    const handle = await s.create()
    const agents = rawService(s.root.agents) as unknown as { registry: { get(id: string): { release?: () => void } | undefined } }
    const release = agents.registry.get(handle.agent.id)?.release
    expect(release).to.be.a('function')
    expect(inYoungGeneration(release!)).to.equal(true)
    await handle.dispose()
  })

  it('keeps no handle of a published agent: a caller holding only its agent and dispose lets the handle go', async () => {
    // a settled child lives as long as its caller holds its run, and the run reads nothing else
    // of the handle: a handle the host kept would be one more object per live child
    const s = await scene()
    // not `s.create()`: the scene keeps what it makes, to dispose it at the end
    let handle: AgentHandle | undefined = await s.root.agents.create({})
    const { agent, dispose } = handle
    const collected = new WeakRef(handle)
    handle = undefined
    // a WeakRef's target stays alive until the job that made (or read) it has ended
    await new Promise(setImmediate)
    await heapAfterGc()
    expect(collected.deref()).to.equal(undefined)
    expect(s.root.agents.get(agent.id)).to.equal(agent)
    const disposal = dispose()
    expect(dispose()).to.equal(disposal)
    await disposal
    expect(s.root.agents.get(agent.id)).to.equal(undefined)
  })

  it('lets a listener registered during setup hear its own agent/created', async () => {
    const s = await scene()
    const heard: string[] = []
    await s.create({
      sessionId: 'self',
      setup: (agent) => {
        agent.ctx.on('agent/created', (created: Agent) => {
          heard.push(created.id)
        })
      },
    })
    expect(heard).to.deep.equal(['self'])
  })

  it('stops listening to the signal once it resolves', async () => {
    const s = await scene()
    const controller = new AbortController()
    const { agent } = await s.create({ signal: controller.signal, setup: () => {} })
    expect(getEventListeners(controller.signal, 'abort')).to.have.length(0)
    controller.abort(new Error('too late'))
    expect(s.root.agents.get(agent.id)).to.equal(agent)
  })

  it('publishes an agent created without setup before create returns', async () => {
    const s = await scene()
    const created = s.create({ sessionId: 'at-once' })
    const agent = s.root.agents.get('at-once')
    expect(s.root.sessions.get('at-once')).to.equal(agent?.session)
    expect((await created).agent).to.equal(agent)
  })

  it('rejects a create without setup through an unloaded plugin\'s context, leaving no agent or session', async () => {
    const s = await scene()
    const created: Agent[] = []
    s.on('agent/created', (agent: Agent) => {
      created.push(agent)
    })
    let pluginCtx: Context | undefined
    const fiber = s.root.plugin({ inject: ['agents'], apply: (ctx: Context) => void (pluginCtx = ctx) })
    await fiber
    const agents = pluginCtx!.agents
    await fiber.dispose()
    const error = await rejectionOf(agents.create({ sessionId: 'late' }))
    expect(error.message).to.equal('the context creating agent "late" was disposed before it was published')
    expect(error.code).to.equal('CREATION_ABORTED')
    expect(created).to.deep.equal([])
    expect(s.root.agents.list()).to.deep.equal([])
    expect(s.root.sessions.list()).to.deep.equal([])
  })

  it('rejects an id that is already live', async () => {
    const s = await scene()
    await s.create({ sessionId: 'dup' })
    expect((await rejectionOf(s.create({ sessionId: 'dup' }))).message).to.equal('session "dup" already exists')
  })
})

describe('agent options (SPEC §1.3)', () => {
  for (const [label, value] of [
    ['0', 0],
    ['-1', -1],
    ['1.5', 1.5],
    ['NaN', Number.NaN],
    ['2 ** 53', 2 ** 53],
    ["'100'", '100'],
  ] as const) {
    it(`rejects maxTokens ${label} with a clear error and no trace`, async () => {
      const s = await scene()
      const error = await rejectionOf(s.create({ sessionId: 'm', agentOptions: { maxTokens: value as number } }))
      expect(error.message).to.equal('agent option maxTokens must be a positive safe integer')
      expect(error.code).to.equal('INVALID_OPTIONS')
      expect(s.root.agents.get('m')).to.equal(undefined)
    })
  }

  it('rejects a malformed approval option with every problem and no trace', async () => {
    const s = await scene()
    const error = await rejectionOf(s.create({ sessionId: 'm', agentOptions: { approval: { default: 'ask', rules: [{ tool: 'x' }] } as never } }))
    expect(error.message).to.equal('agent option approval rules[0] decision must be "allow", "ask" or "deny"')
    expect(error.code).to.equal('INVALID_OPTIONS')
    expect(s.root.agents.get('m')).to.equal(undefined)
  })

  it('keeps the approval option as a frozen copy that later changes to the given policy do not reach', async () => {
    const s = await scene()
    const approval = { default: 'ask' as 'ask' | 'allow', rules: [{ tool: 'shell', decision: 'deny' as const }] }
    const { agent } = await s.create({ agentOptions: { approval } })
    approval.default = 'allow'
    approval.rules.length = 0
    expect(agent.options.approval).to.deep.equal({ default: 'ask', rules: [{ tool: 'shell', decision: 'deny' }] })
    expect(Object.isFrozen(agent.options.approval)).to.equal(true)
  })

  it('freezes a copy of the options', async () => {
    const s = await scene()
    const agentOptions = { maxTokens: 64, custom: 'kept' }
    const { agent } = await s.create({ agentOptions })
    agentOptions.maxTokens = 1
    expect(agent.options).to.deep.equal({ provider: 'scripted', model: 'test', maxTokens: 64, custom: 'kept' })
    expect(Object.isFrozen(agent.options)).to.equal(true)
  })

  it('keeps the maxSteps it checked when a getter answers differently on every read', async () => {
    const s = await scene()
    const answers = [4, -1, -1]
    let reads = 0
    const agentOptions = Object.defineProperty({}, 'maxSteps', { enumerable: true, get: () => answers[reads++] })
    const handle = await s.root.agents.create({ agentOptions })
    expect(handle.agent.options.maxSteps).to.equal(4)
    expect(reads).to.equal(1)
    await handle.dispose()
  })
})

describe('agent.ctx (SPEC §1.3)', () => {
  it('costs no fiber for a plain agent, nor for scoped registrations made through it', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push({ text: 'hi' })
    agent.followup('hello')
    await agent.whenIdle()
    expect(s.snapshot().fibers).to.equal(s.baseline.fibers)
    agent.ctx.tools.register({ name: 'note', description: 'n', parameters: { type: 'object' }, execute: () => 1 })
    agent.ctx.systemPrompt.section({ name: 'role', order: 5, text: 'You take notes.' })
    agent.ctx.on('tools/result', () => {})
    expect(s.snapshot().fibers).to.equal(s.baseline.fibers)
  })

  it('gets its cordis fiber on first demand, under the owner, and loses it on dispose', async () => {
    const s = await scene()
    const { agent } = await s.create()
    const disposed: string[] = []
    agent.ctx.effect(() => () => void disposed.push('effect'))
    expect(s.snapshot().fibers).to.equal(s.baseline.fibers + 1)
    agent.ctx.on('subagent/end' as never, (() => {}) as never)
    expect(s.snapshot().fibers).to.equal(s.baseline.fibers + 1)
    await s.end()
    expect(disposed).to.deep.equal(['effect'])
  })

  it('returns the same context on every access', async () => {
    const s = await scene()
    const { agent } = await s.create()
    expect(agent.ctx).to.equal(agent.ctx)
  })
})

describe('agents.create: late setups, bad signals and deep seeds (found by the reliability suites)', () => {
  it('refuses a registration from a setup that outlived its aborted creation', async () => {
    // guards against what happened without it: the late registration landed in the rolled-back agent's tables
    const host = await scene()
    const baseline = host.snapshot()
    const controller = new AbortController()
    let open!: () => void
    const opened = new Promise<void>((resolve) => (open = resolve))
    let child: Agent | undefined
    let late: Promise<unknown> | undefined
    const creating = host.root.agents.create({
      signal: controller.signal,
      setup(agent) {
        child = agent
        const ctx = agent.ctx
        late = opened.then(() => ctx.tools.register(tool))
        return late.then(() => {})
      },
    })
    await Promise.resolve()
    controller.abort()
    expect((await rejectionOf(creating)).name).to.equal('AbortError')
    open()
    const error = await rejectionOf(late!)
    expect(error.message).to.equal(`agent "${child!.id}" is disposed`)
    expect(error.code).to.equal('AGENT_DISPOSED')
    expectScopeCleared(child!, 'the rolled-back agent')
    expect(host.snapshot()).to.deep.equal(baseline)
  })

  it('rejects a create signal that is not an AbortSignal with a clear TypeError', async () => {
    // guards against what happened without it: `signal.removeEventListener is not a function`, from deep inside the transaction
    const host = await scene()
    const error = await rejectionOf(host.root.agents.create({ signal: { aborted: false } as never, setup() {} }))
    expect(error).to.be.instanceOf(TypeError)
    expect(error.message).to.equal('agent create signal must be an AbortSignal')
  })

  it('names the nesting limit when seed data is JSON but too deep', async () => {
    // guards against what happened without it: `session seed event 0 data must be JSON data`, for data that is JSON
    const host = await scene()
    const error = await rejectionOf(host.root.agents.create({ seed: [{ seq: 0, type: 'note', data: nested(300) }] }))
    expect(error.message).to.equal('session seed event 0 data must be JSON data nested at most 256 levels deep')
  })
})
