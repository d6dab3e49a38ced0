import { expect } from 'chai'
import type { Context } from 'cordis'
import type { Agent, AgentHandle, Session, SessionEvent } from '../../lib/types.ts'
import { Host } from '../../plugins/host/index.ts'
import { scopeOf } from '../../plugins/host/scope.ts'
import { expectScopeCleared, lastOf, nextEvent, rejectionOf, scene } from '../support/scene.ts'

const tool = { name: 'probe', description: 'probe', parameters: { type: 'object' }, execute: () => 'ok' }

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void
  const promise = new Promise<void>((resolve) => (open = resolve))
  return { promise, open }
}

describe('AgentHandle.dispose (SPEC §1.3)', () => {
  it('hands every caller the same promise', async () => {
    const s = await scene()
    const handle = await s.create()
    const first = handle.dispose()
    expect(handle.dispose()).to.equal(first)
    await first
    expect(handle.dispose()).to.equal(first)
  })

  it('cancels a running turn with {kind: "disposed"}', async () => {
    const s = await scene()
    const handle = await s.create()
    s.scripted.push('hang')
    const streaming = nextEvent(s.root, handle.agent, 'assistant/delta')
    handle.agent.followup('hello')
    await streaming
    await handle.dispose()
    expect(lastOf(handle.agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'aborted', cause: { kind: 'disposed' } } })
  })

  it('drops queued input instead of running it', async () => {
    const s = await scene()
    const handle = await s.create()
    s.scripted.push('hang')
    handle.agent.followup('first')
    handle.agent.followup('queued')
    await handle.dispose()
    expect(handle.agent.session.events.filter((event) => event.type === 'turn/start')).to.have.length(1)
    expect(s.scripted.requests).to.have.length(1)
  })

  it('awaits idle, unwinds the scope, emits agent/disposed, then removes the session', async () => {
    const s = await scene()
    const handle = await s.create()
    const { agent } = handle
    const order: string[] = []
    agent.ctx.effect(() => () => void order.push('scope unwound'))
    s.on('session/event', (_session: Session, event: SessionEvent) => {
      if (event.type === 'turn/end') order.push('turn/end')
    })
    s.on('agent/disposed', (disposed: Agent) => {
      order.push(`agent/disposed listed=${s.root.agents.get(disposed.id) !== undefined}`)
    })
    s.scripted.push('hang')
    const streaming = nextEvent(s.root, agent, 'assistant/delta')
    agent.followup('hello')
    await streaming
    await handle.dispose()
    order.push(`resolved session=${s.root.sessions.get(agent.id) !== undefined}`)
    expect(order).to.deep.equal(['turn/end', 'scope unwound', 'agent/disposed listed=false', 'resolved session=false'])
  })

  it('removes every scoped registration', async () => {
    const s = await scene()
    const handle = await s.create()
    const { agent } = handle
    agent.ctx.tools.register(tool)
    agent.ctx.tools.guard(() => undefined)
    agent.ctx.systemPrompt.section({ name: 'scoped', order: 1, text: 'scoped text' })
    agent.ctx.on('tools/result', () => {})
    agent.ctx.models.register('private', { stream: async function* () {} })
    await handle.dispose()
    expect(s.root.tools.get('probe', agent)).to.equal(undefined)
    expect(s.root.systemPrompt.assemble(agent).text).to.equal('')
    expect(s.root.models.resolve('private', agent)).to.equal(undefined)
    // scoped listeners and guards live in the host's per-agent tables, not in cordis's
    const scope = scopeOf(agent)
    expect([scope?.hooks, scope?.guards, scope?.tools, scope?.sections, scope?.models]).to.deep.equal([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ])
  })

  it('refuses input afterwards', async () => {
    const s = await scene()
    const handle = await s.create({ sessionId: 'gone' })
    await handle.dispose()
    expect(() => handle.agent.followup('hello')).to.throw('agent "gone" is disposed')
  })

  it('keeps the other agents running', async () => {
    const s = await scene()
    const doomed = await s.create()
    const survivor = await s.create()
    await doomed.dispose()
    s.scripted.push({ text: 'still here' })
    survivor.agent.followup('hello')
    await survivor.agent.whenIdle()
    expect(lastOf(survivor.agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'completed' } })
  })
})

describe('agent ownership (SPEC §1.3)', () => {
  it('disposes an agent created through another agent’s context with its owner', async () => {
    const s = await scene()
    const parent = await s.create()
    const child = await parent.agent.ctx.agents.create({ sessionId: 'child' })
    const grandchild = await child.agent.ctx.agents.create({ sessionId: 'grandchild' })
    const disposed: string[] = []
    s.on('agent/disposed', (agent: Agent) => {
      disposed.push(agent.id)
    })
    await parent.dispose()
    expect(disposed).to.deep.equal(['grandchild', 'child', parent.agent.id])
    expect(s.root.agents.list()).to.deep.equal([])
    expect(grandchild.agent.session.events).to.deep.equal([])
  })

  it('cancels a running child with {kind: "disposed"} when its owner goes', async () => {
    const s = await scene()
    const parent = await s.create()
    const child = await parent.agent.ctx.agents.create({ agentOptions: { provider: 'scripted', model: 'test' } })
    s.scripted.push('hang')
    const streaming = nextEvent(s.root, child.agent, 'assistant/delta')
    child.agent.followup('work')
    await streaming
    await parent.dispose()
    expect(lastOf(child.agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'aborted', cause: { kind: 'disposed' } } })
  })

  it('leaves the owner alive when only the child is disposed', async () => {
    const s = await scene()
    const parent = await s.create()
    const child = await parent.agent.ctx.agents.create({})
    await child.dispose()
    expect(s.root.agents.list()).to.deep.equal([parent.agent])
  })

  it('rejects a child whose owner is disposed during the child’s setup, leaving no trace', async () => {
    const s = await scene()
    const parent = await s.create()
    const step = gate()
    const created = parent.agent.ctx.agents.create({
      sessionId: 'orphan',
      setup: (child) => {
        child.ctx.tools.register(tool)
        return step.promise
      },
    })
    await parent.dispose()
    step.open()
    const error = await rejectionOf(created)
    expect(error.message).to.equal(`owner agent "${parent.agent.id}" was disposed before agent "orphan" was published`)
    expect(s.root.agents.get('orphan')).to.equal(undefined)
  })
})

describe('agents created through a plugin (SPEC §1.3)', () => {
  function creator(sink: { handle?: AgentHandle; created?: Promise<AgentHandle> }, setup?: () => Promise<void>) {
    return {
      inject: ['agents'],
      apply(ctx: Context) {
        sink.created = ctx.agents.create({ agentOptions: { provider: 'scripted', model: 'test' }, setup })
        sink.created.then((handle) => (sink.handle = handle)).catch(() => {})
      },
    }
  }

  it('disposes an idle agent when the plugin is unloaded', async () => {
    const s = await scene()
    const sink: { handle?: AgentHandle; created?: Promise<AgentHandle> } = {}
    const fiber = s.root.plugin(creator(sink))
    await fiber
    const { agent } = await sink.created!
    await fiber.dispose()
    expect(s.root.agents.get(agent.id)).to.equal(undefined)
  })

  it('cancels and disposes a running agent before the unload finishes', async () => {
    const s = await scene()
    const sink: { handle?: AgentHandle; created?: Promise<AgentHandle> } = {}
    const fiber = s.root.plugin(creator(sink))
    await fiber
    const { agent } = await sink.created!
    s.scripted.push('hang')
    const streaming = nextEvent(s.root, agent, 'assistant/delta')
    agent.followup('work')
    await streaming
    await fiber.dispose()
    expect(s.root.agents.get(agent.id)).to.equal(undefined)
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'aborted', cause: { kind: 'disposed' } } })
  })

  it('rejects a create whose plugin is unloaded during setup, leaving no trace', async () => {
    const s = await scene()
    const step = gate()
    const sink: { handle?: AgentHandle; created?: Promise<AgentHandle> } = {}
    const fiber = s.root.plugin(creator(sink, () => step.promise))
    await fiber
    await fiber.dispose()
    step.open()
    const error = await rejectionOf(sink.created!)
    expect(error.message).to.match(/^the context creating agent ".+" was disposed before it was published$/)
    expect(s.root.agents.list()).to.deep.equal([])
  })

  it('does not dispose an agent when a different plugin is unloaded', async () => {
    const s = await scene()
    const handle = await s.create()
    const other = s.root.plugin(() => {})
    await other
    await other.dispose()
    expect(s.root.agents.get(handle.agent.id)).to.equal(handle.agent)
  })
})

describe('concurrent creates of one id (SPEC §1.3)', () => {
  it('rejects the one that publishes second and leaves the first intact', async () => {
    const s = await scene()
    const step = gate()
    const slow = s.create({
      sessionId: 'same',
      setup: (agent) => {
        agent.ctx.tools.register(tool)
        return step.promise
      },
    })
    const fast = await s.create({ sessionId: 'same' })
    step.open()
    expect((await rejectionOf(slow)).message).to.equal('session "same" already exists')
    expect(s.root.agents.get('same')).to.equal(fast.agent)
    expect(s.root.tools.get('probe', fast.agent)).to.equal(undefined)
  })
})

describe('host unload', () => {
  it('disposes every agent still alive', async () => {
    const s = await scene()
    const { agent } = await s.create()
    const disposed: string[] = []
    s.on('agent/disposed', (gone: Agent) => {
      disposed.push(gone.id)
    })
    s.scripted.push('hang')
    const streaming = nextEvent(s.root, agent, 'assistant/delta')
    agent.followup('work')
    await streaming
    for (const fiber of [...s.root.registry.get(Host)!.fibers]) await fiber.dispose()
    expect(disposed).to.deep.equal([agent.id])
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'aborted', cause: { kind: 'disposed' } } })
    s.invariants.check()
  })
})

describe('agent disposal: registrations through a disposed context (found by the reliability suites)', () => {
  it('refuses scoped registrations through the context of a disposed agent', async () => {
    // guards against what happened without it: a tool or section registered after disposal silently entered the cleared tables
    const host = await scene()
    const handle = await host.root.agents.create({})
    const ctx = handle.agent.ctx
    await handle.dispose()
    const message = `agent "${handle.agent.id}" is disposed`
    expect(() => ctx.tools.register(tool)).to.throw(message)
    expect(() => ctx.systemPrompt.section({ name: 'late', order: 1, text: 'late' })).to.throw(message)
    expect(() => ctx.tools.guard(() => undefined)).to.throw(message)
    expectScopeCleared(handle.agent, 'the disposed agent')
  })
})
