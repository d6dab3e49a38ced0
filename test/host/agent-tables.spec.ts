import { expect } from 'chai'
import type { Agent, ToolExecution, ToolResult } from '../../lib/types.ts'
import { listenFor, listenersOf } from '../../plugins/host/index.ts'
import { scopeOf } from '../../plugins/host/scope.ts'
import { expectScopeCleared, scene, textOf } from '../support/scene.ts'

function tool(name: string) {
  return { name, description: `The ${name} tool.`, parameters: { type: 'object' }, execute: () => `${name} ran` }
}

function thrown(action: () => unknown): Error & { code?: string } {
  try {
    action()
  } catch (error) {
    return error as Error & { code?: string }
  }
  throw new Error('expected a throw')
}

describe('registrations for one agent, without its context (registerFor, guardFor, listenFor)', () => {
  it('registers a tool only that agent sees, and makes the agent no context', async () => {
    const s = await scene()
    const [own, other] = [(await s.create()).agent, (await s.create()).agent]
    s.root.tools.registerFor(own, tool('own'))
    expect(s.root.tools.schemas(own).map((schema) => schema.name)).to.deep.equal(['own'])
    expect(s.root.tools.schemas(other)).to.deep.equal([])
    expect(scopeOf(own)!.ctx).to.equal(undefined)
  })

  it('rejects a second tool of a name the agent already has with DUPLICATE_TOOL', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.root.tools.registerFor(agent, tool('taken'))
    const error = thrown(() => s.root.tools.registerFor(agent, tool('taken')))
    expect([error.message, error.code]).to.deep.equal(['tool "taken" is already registered', 'DUPLICATE_TOOL'])
  })

  it('denies that agent’s calls with a guardFor guard, and no other agent’s', async () => {
    const s = await scene()
    s.root.tools.register(tool('shared'))
    const [guarded, other] = [(await s.create()).agent, (await s.create()).agent]
    s.root.tools.guardFor(guarded, (exec) => `no ${exec.name}`)
    const denied = await s.root.tools.execute({ name: 'shared', arguments: '{}', agent: guarded })
    const ran = await s.root.tools.execute({ name: 'shared', arguments: '{}', agent: other })
    expect([textOf(denied), denied.code]).to.deep.equal(['Error: no shared', 'TOOL_DENIED'])
    expect(textOf(ran)).to.equal('shared ran')
  })

  it('delivers that agent’s own tools/result to a listenFor listener, and no other agent’s', async () => {
    const s = await scene()
    s.root.tools.register(tool('shared'))
    const [watched, other] = [(await s.create()).agent, (await s.create()).agent]
    const seen: [string | undefined, string][] = []
    listenFor(watched, 'tools/result', (exec: ToolExecution, result: ToolResult) => void seen.push([exec.agent?.id, textOf(result)]))
    await s.root.tools.execute({ name: 'shared', arguments: '{}', agent: other })
    await s.root.tools.execute({ name: 'shared', arguments: '{}', agent: watched })
    expect(seen).to.deep.equal([[watched.id, 'shared ran']])
  })

  it('rejects a listenFor listener for an event that is not about one agent, naming the event', async () => {
    const s = await scene()
    const { agent } = await s.create()
    expect(() => listenFor(agent, 'subagent/settle', () => {})).to.throw(TypeError, '"subagent/settle" is not an event about one agent')
  })

  it('rejects a listenFor listener that is not a function, naming the event', async () => {
    const s = await scene()
    const { agent } = await s.create()
    expect(() => listenFor(agent, 'tools/result', 'nope' as never)).to.throw(TypeError, 'listener for "tools/result" must be a function')
  })

  it('rejects a guardFor guard that is not a function and adds nothing', async () => {
    const s = await scene()
    const { agent } = await s.create()
    expect(() => s.root.tools.guardFor(agent, 'nope' as never)).to.throw(TypeError, 'tool guard must be a function')
    expect(s.root.tools.guardsOf(agent)).to.deep.equal([])
  })

  it('rejects a ctx.tools.guard guard that is not a function with the same message', async () => {
    const s = await scene()
    expect(() => s.root.tools.guard('nope' as never)).to.throw(TypeError, 'tool guard must be a function')
  })

  it('rejects every registration for a disposed agent with AGENT_DISPOSED', async () => {
    const s = await scene()
    const handle = await s.create()
    await handle.dispose()
    const { agent } = handle
    const errors = [
      thrown(() => s.root.tools.registerFor(agent, tool('late'))),
      thrown(() => s.root.tools.guardFor(agent, () => undefined)),
      thrown(() => listenFor(agent, 'tools/result', () => {})),
    ]
    expect(errors.map((error) => [error.message, error.code])).to.deep.equal(Array(3).fill([`agent "${agent.id}" is disposed`, 'AGENT_DISPOSED']))
    expectScopeCleared(agent, 'after the late registrations')
  })

  it('rejects an agent the host did not make with a TypeError', async () => {
    const s = await scene()
    const foreign = { id: 'foreign' } as unknown as Agent
    expect(() => s.root.tools.guardFor(foreign, () => undefined)).to.throw(TypeError, 'agent registration needs an agent made by the host')
  })

  it('drops the tool, the guard and the listener with the agent’s tables when it is disposed', async () => {
    const s = await scene()
    const handle = await s.create()
    s.root.tools.registerFor(handle.agent, tool('own'))
    s.root.tools.guardFor(handle.agent, () => undefined)
    listenFor(handle.agent, 'agent/turn-stop', () => false)
    await handle.dispose()
    expectScopeCleared(handle.agent, 'after dispose')
  })

  it('reads back the listeners one agent alone has for an event, in order, as a snapshot without the global ones', async () => {
    const s = await scene()
    const { agent } = await s.create()
    const [first, second, global] = [() => undefined, () => undefined, () => undefined]
    agent.ctx.on('tools/pre-execute', first as never)
    listenFor(agent, 'tools/pre-execute', second)
    s.on('tools/pre-execute', global as never)
    const read = listenersOf(agent, 'tools/pre-execute')
    listenFor(agent, 'tools/pre-execute', global)
    expect(read).to.deep.equal([first, second])
    expect(listenersOf(agent, 'tools/post-execute')).to.deep.equal([])
  })

  it('rejects reading back the listeners of an event that is not about one agent with a TypeError naming the event', async () => {
    // such a listener registered through the agent's context is a global one: an empty answer would be wrong
    const s = await scene()
    const { agent } = await s.create()
    agent.ctx.on('subagent/setup', () => undefined)
    expect(() => listenersOf(agent, 'subagent/setup')).to.throw(TypeError, '"subagent/setup" is not an event about one agent')
  })
})

