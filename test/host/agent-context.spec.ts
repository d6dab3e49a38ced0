import { expect } from 'chai'
import { type Context, symbols } from 'cordis'
import { rawService } from '../../cordis-glue/bridge.ts'
import { kScope, scopeOf } from '../../plugins/host/scope.ts'
import { scene } from '../support/scene.ts'

// made through the parent's context, so the parent owns (and disposes) them
const scripted = { agentOptions: { provider: 'scripted', model: 'test' } }

describe('agent contexts: one shared prototype per owner (SPEC §1 "scoped")', () => {
  it('gives an agent context no own property but its scope', async () => {
    const s = await scene()
    const { agent } = await s.create()
    expect(Reflect.ownKeys(agent.ctx)).to.deep.equal([kScope])
    expect(scopeOf(agent.ctx)).to.equal(scopeOf(agent))
    await s.end()
  })

  it('shares one prototype among the contexts of agents with the same owner', async () => {
    const s = await scene()
    const parent = await s.create()
    const first = await parent.agent.ctx.agents.create(scripted)
    const second = await parent.agent.ctx.agents.create(scripted)
    const shared = Object.getPrototypeOf(first.agent.ctx) as object
    expect(Object.getPrototypeOf(second.agent.ctx)).to.equal(shared)
    expect(Reflect.ownKeys(shared)).to.include.members(['sessions', 'agents', 'tools', 'systemPrompt', 'models', 'fiber', 'on'])
    expect(Object.getPrototypeOf(shared)).to.equal(parent.agent.ctx)
    await s.end()
  })

  it('reads a host service through an agent context as a view that names the context as its caller', async () => {
    const s = await scene()
    const { agent } = await s.create()
    const tools = agent.ctx.tools as unknown as { ctx: Context; [symbols.caller]: Context }
    expect(tools.ctx).to.equal(agent.ctx)
    expect(tools[symbols.caller]).to.equal(agent.ctx)
    expect(rawService(tools)).to.equal(rawService(s.root.tools))
    await s.end()
  })

  it('keeps a registration made through one agent context out of a sibling that shares its prototype', async () => {
    const s = await scene()
    const parent = await s.create()
    const first = await parent.agent.ctx.agents.create(scripted)
    const second = await parent.agent.ctx.agents.create(scripted)
    first.agent.ctx.tools.register({ name: 'mine', description: 'd', parameters: { type: 'object' }, execute: () => 'ok' })
    first.agent.ctx.on('agent/turn-stop', () => true)
    expect(s.root.tools.schemas(first.agent).map((schema) => schema.name)).to.deep.equal(['mine'])
    expect(s.root.tools.schemas(second.agent)).to.deep.equal([])
    expect(scopeOf(second.agent)?.hooks).to.equal(undefined)
    expect(scopeOf(second.agent)?.fiber).to.equal(undefined)
    await s.end()
  })

  it('makes the fiber of the agent itself for a context derived from its context', async () => {
    const s = await scene()
    const { agent } = await s.create()
    const derived = agent.ctx.extend()
    expect(derived.fiber).to.equal(scopeOf(agent)?.fiber)
    expect(agent.ctx.fiber).to.equal(derived.fiber)
    await s.end()
  })

  it('keeps the listeners of each event apart in the scope and forgets an event once its last one is removed', async () => {
    const s = await scene()
    const { agent } = await s.create()
    const first = () => undefined
    const second = () => undefined
    const offFirst = agent.ctx.on('agent/turn-stop', first)
    const offSecond = agent.ctx.on('agent/turn-stop', second, true)
    const offResult = agent.ctx.on('tools/result', first)
    const scope = scopeOf(agent)!
    expect(scope.hooksFor('agent/turn-stop')).to.deep.equal([second, first])
    expect(scope.hooksFor('tools/result')).to.deep.equal([first])
    offFirst()
    offSecond()
    expect(scope.hooksFor('agent/turn-stop')).to.equal(undefined)
    expect(scope.hooksFor('tools/result')).to.deep.equal([first])
    offResult()
    expect(scope.hooks).to.equal(undefined)
    await s.end()
  })
  it('removes one registration of a listener registered twice, however often its remover is called', async () => {
    const s = await scene()
    const { agent } = await s.create()
    const listener = () => undefined
    const off = agent.ctx.on('agent/turn-stop', listener)
    agent.ctx.on('agent/turn-stop', listener, { prepend: true })
    off()
    off()
    expect(scopeOf(agent)!.hooksFor('agent/turn-stop')).to.deep.equal([listener])
    await s.end()
  })

  it('keeps a third event apart from two others registered before it', async () => {
    const s = await scene()
    const { agent } = await s.create()
    const [a, b, c] = [() => undefined, () => undefined, () => undefined]
    agent.ctx.on('session/event', a)
    agent.ctx.on('tools/result', b)
    agent.ctx.on('agent/turn-stop', c)
    const scope = scopeOf(agent)!
    expect([scope.hooksFor('session/event'), scope.hooksFor('tools/result'), scope.hooksFor('agent/turn-stop')]).to.deep.equal([[a], [b], [c]])
    expect(scope.hooks).to.have.length(6)
    await s.end()
  })
})
