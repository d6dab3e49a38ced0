import { expect } from 'chai'
import type { Context } from 'cordis'
import sinon from 'sinon'
import type { Agent, AgentHandle, PromptAssembly, Session, SessionEvent, ToolExecution } from '../../lib/types.ts'
import { scene } from '../support/scene.ts'

const echo = {
  name: 'echo',
  description: 'Echoes its text.',
  parameters: { type: 'object' },
  execute: () => 'echoed',
}

/** Every hook about one agent, as `[event, listener]` pairs that record into `heard`. */
function scopedListeners(label: string, heard: string[]) {
  return [
    ['session/event', (_session: Session, event: SessionEvent) => void heard.push(`${label} session/event ${event.type}`)],
    ['tools/result', (exec: ToolExecution) => void heard.push(`${label} tools/result ${exec.name}`)],
    [
      'tools/pre-execute',
      (exec: ToolExecution, next: () => unknown) => {
        heard.push(`${label} tools/pre-execute ${exec.name}`)
        return next()
      },
    ],
    [
      'tools/post-execute',
      (exec: ToolExecution, _result: unknown, next: () => unknown) => {
        heard.push(`${label} tools/post-execute ${exec.name}`)
        return next()
      },
    ],
    [
      'agent/pre-step',
      (_agent: Agent, info: { step: number }, next: () => unknown) => {
        heard.push(`${label} agent/pre-step ${info.step}`)
        return next()
      },
    ],
    ['agent/turn-stop', (_agent: Agent, info: { step: number }) => void heard.push(`${label} agent/turn-stop ${info.step}`)],
    [
      'system-prompt/assemble',
      (_assembly: PromptAssembly, _info: unknown, next: () => unknown) => {
        heard.push(`${label} system-prompt/assemble`)
        return next()
      },
    ],
  ] as const
}

function listen(agent: Agent, label: string, heard: string[]): void {
  for (const [name, listener] of scopedListeners(label, heard)) agent.ctx.on(name, listener as never)
}

async function toolTurn(s: Awaited<ReturnType<typeof scene>>, agent: Agent): Promise<void> {
  s.scripted.push({ toolCalls: [{ id: 'c1', name: 'echo', arguments: '{}' }] }, { text: 'done' })
  agent.followup('hello')
  await agent.whenIdle()
}

describe('agent scopes: isolation (SPEC §1 "Scoped")', () => {
  it('keeps a listener registered through agent A’s context deaf to agent B', async () => {
    const s = await scene()
    s.root.tools.register(echo)
    const a = await s.create()
    const b = await s.create()
    const heard: string[] = []
    listen(a.agent, 'A', heard)
    await toolTurn(s, b.agent)
    expect(heard).to.deep.equal([])
  })

  it('lets agent A’s listener hear every hook of A’s own turn', async () => {
    const s = await scene()
    s.root.tools.register(echo)
    const { agent } = await s.create()
    const heard: string[] = []
    listen(agent, 'A', heard)
    await toolTurn(s, agent)
    for (const hook of ['session/event turn/start', 'agent/pre-step 1', 'system-prompt/assemble', 'tools/pre-execute echo']) {
      expect(heard).to.include(`A ${hook}`)
    }
    for (const hook of ['tools/post-execute echo', 'tools/result echo', 'agent/turn-stop 1', 'session/event turn/end']) {
      expect(heard).to.include(`A ${hook}`)
    }
  })

  it('keeps agent A’s listeners out of direct tool calls made for B or for no agent', async () => {
    const s = await scene()
    s.root.tools.register(echo)
    const a = await s.create()
    const b = await s.create()
    const heard: string[] = []
    listen(a.agent, 'A', heard)
    await s.root.tools.execute({ name: 'echo', arguments: {}, agent: b.agent })
    await s.root.tools.execute({ name: 'echo', arguments: {} })
    expect(heard).to.deep.equal([])
  })

  it('scopes what a plugin applied to agent A’s context registers, until the plugin is unloaded', async () => {
    const s = await scene()
    const a = await s.create()
    const b = await s.create()
    const heard: string[] = []
    const fiber = a.agent.ctx.plugin({
      inject: ['tools'],
      apply: (ctx: Context) => {
        ctx.on('session/event', (session: Session, event: SessionEvent) => {
          heard.push(`${session.id === a.agent.id ? 'A' : 'other'} ${event.type}`)
        })
        ctx.tools.register(echo)
      },
    })
    await fiber
    a.agent.session.append('first', {})
    b.agent.session.append('first', {})
    expect(heard).to.deep.equal(['A first'])
    expect([s.root.tools.get('echo', a.agent)?.name, s.root.tools.get('echo', b.agent), s.root.tools.get('echo')]).to.deep.equal([
      'echo',
      undefined,
      undefined,
    ])
    await fiber.dispose()
    a.agent.session.append('second', {})
    expect(heard).to.deep.equal(['A first'])
    expect(s.root.tools.get('echo', a.agent)).to.equal(undefined)
  })

  it('lets a global listener hear every agent', async () => {
    const s = await scene()
    const a = await s.create()
    const b = await s.create()
    const sessions = new Set<string>()
    s.on('session/event', (session: Session) => {
      sessions.add(session.id)
    })
    a.agent.session.append('note', {})
    b.agent.session.append('note', {})
    expect([...sessions]).to.deep.equal([a.agent.id, b.agent.id])
  })

  it('does not change what A’s dispatch calls when 1000 other agents have scoped listeners', async () => {
    const s = await scene()
    s.root.tools.register(echo)
    const { agent } = await s.create()
    const heard: string[] = []
    listen(agent, 'A', heard)
    const hooks = (s.root.events as unknown as { _hooks: Record<string, unknown[] | undefined> })._hooks
    const names = scopedListeners('', []).map(([name]) => name)
    const globalCounts = () => names.map((name) => hooks[name]?.length ?? 0)

    await toolTurn(s, agent)
    const alone = heard.splice(0)
    const globalsBefore = globalCounts()

    const others: AgentHandle[] = []
    const otherListener = sinon.spy()
    for (let i = 0; i < 1000; i++) {
      const other = await s.create()
      for (const [name] of scopedListeners('', [])) other.agent.ctx.on(name, otherListener as never)
      others.push(other)
    }
    await toolTurn(s, agent)

    expect(heard).to.deep.equal(alone)
    expect(otherListener.callCount).to.equal(0)
    expect(globalCounts()).to.deep.equal(globalsBefore)
    await Promise.all(others.map((other) => other.dispose()))
  }).timeout(30_000)
})
