import { expect } from 'chai'
import { INTERRUPTED_TOOL_RESULT } from '../../lib/session/open-turn.ts'
import type { Agent, ResumedTreeInfo } from '../../lib/types.ts'
import { rejectionOf, typesOf } from '../support/scene.ts'
import { crashCopy, durableHost, tick } from './fixture.ts'

const signal = () => new AbortController().signal

/** Resolves once `agent`'s session holds an event of `type`. */
async function until(agent: Agent, type: string): Promise<void> {
  while (!agent.session.events.some((event) => event.type === type)) await tick()
}

describe('resumeTree: a stored tree published again (SPEC §14)', () => {
  it('republishes the root and every descendant, each owned by its parent, with headers and options as saved', async () => {
    const first = await durableHost()
    const root = await first.agent({ maxTokens: 50 })
    first.scripted.push({ text: 'child done' }, { text: 'grandchild done' })
    const child = await first.root.inprocessRun.spawn({ parent: root, prompt: 'task', label: 'worker', signal: signal() })
    await child.result
    const grandchild = await first.root.inprocessRun.spawn({ parent: child.agent, prompt: 'deeper', signal: signal() })
    await grandchild.result
    const dir = await crashCopy(first)

    const second = await durableHost(dir)
    let handleOf: ResumedTreeInfo['handleOf'] | undefined
    second.on('subagent/resumed', (info) => void (handleOf = info.handleOf))
    const tree = await second.root.inprocessRun.resumeTree(root.id)
    expect(tree.root.id).to.equal(root.id)
    expect(tree.agents.map((agent) => agent.id)).to.deep.equal([child.id, grandchild.id])
    expect(tree.agents[0]!.session.header).to.deep.equal(child.agent.session.header)
    expect(tree.agents[1]!.session.header).to.deep.equal(grandchild.agent.session.header)
    expect(tree.agents[1]!.session.header.delegationDepth).to.equal(2)
    expect({ ...tree.agents[0]!.options }).to.deep.equal({ ...child.agent.options })
    expect(tree.agents[0]!.session.events).to.deep.equal(child.agent.session.events)
    // each is owned by its parent: disposing the middle one takes the grandchild with it
    await handleOf!(tree.agents[0]!)!.dispose()
    expect(second.root.agents.list()).to.deep.equal([tree.root])
    await tree.dispose()
    expect(second.root.agents.list()).to.deep.equal([])
    expect(second.root.sessions.list()).to.deep.equal([])
  })

  it('lets a resumed agent call its model again with the options its header saved', async () => {
    const first = await durableHost()
    const root = await first.agent()
    const dir = await crashCopy(first)
    const second = await durableHost(dir)
    const tree = await second.root.inprocessRun.resumeTree(root.id)
    second.scripted.push({ text: 'back again' })
    tree.root.followup('are you there?')
    await tree.root.whenIdle()
    expect(typesOf(tree.root).slice(-1)).to.deep.equal(['turn/end'])
    expect(tree.root.session.events.at(-1)!.data).to.deep.include({ reason: { kind: 'completed' } })
    await tree.dispose()
  })

  it('gives each tool call of an open turn the interrupted error result and ends the turn interrupted, never running the tool', async () => {
    const first = await durableHost()
    let release!: () => void
    first.root.tools.register({
      name: 'deploy',
      description: 'deploys',
      parameters: { type: 'object' },
      execute: () => new Promise((resolve) => (release = () => resolve({ isError: false, content: [{ type: 'text', text: 'deployed' }] }))),
    })
    const root = await first.agent()
    first.scripted.push({ toolCalls: [{ id: 'call_1', name: 'deploy', arguments: '{}' }] }, { text: 'done' })
    root.followup('deploy it')
    await until(root, 'assistant/message')
    const dir = await crashCopy(first)
    release()
    await root.whenIdle()

    const second = await durableHost(dir)
    let ran = 0
    second.root.tools.register({ name: 'deploy', description: 'deploys', parameters: { type: 'object' }, execute: async () => {
        ran++
        return { isError: false, content: [] }
      },
    })
    const tree = await second.root.inprocessRun.resumeTree(root.id)
    const events = tree.root.session.events
    expect(events.slice(-2).map((event) => [event.type, event.data])).to.deep.equal([
      ['tool/result', { turn: 1, step: 1, callId: 'call_1', name: 'deploy', isError: true, content: [{ type: 'text', text: INTERRUPTED_TOOL_RESULT }] }],
      ['turn/end', { turn: 1, reason: { kind: 'interrupted' } }],
    ])
    expect(INTERRUPTED_TOOL_RESULT).to.equal('Error: interrupted before the tool returned')
    await tick()
    expect(ran).to.equal(0)
    expect(tree.root.status).to.equal('idle')
    // the file holds the closed turn too
    await second.files.flush()
    expect((await second.lines(root.id)).slice(-1)).to.deep.equal([{ seq: events.length - 1, type: 'turn/end', data: { turn: 1, reason: { kind: 'interrupted' } } }])
    await tree.dispose()
  })

  it('decides an undecided approval request interrupted by resume before the call gets its interrupted result', async () => {
    const first = await durableHost()
    first.root.tools.register({
      name: 'delete_branch',
      description: 'asks first',
      parameters: { type: 'object' },
      // what the approval point leaves in the log while a call waits for a person
      execute: (_args, exec) => {
        exec.agent!.session.append('approval/requested', { turn: 1, step: 1, callId: exec.callId, name: exec.name, arguments: '{}', requestId: 'req-1' })
        return new Promise((_, reject) => exec.signal.addEventListener('abort', () => reject(new Error('cancelled'))))
      },
    })
    const root = await first.agent()
    first.scripted.push({ toolCalls: [{ id: 'call_7', name: 'delete_branch', arguments: '{}' }] })
    root.followup('clean up')
    await until(root, 'approval/requested')
    const dir = await crashCopy(first)
    root.cancel({ kind: 'user' })

    const second = await durableHost(dir)
    const tree = await second.root.inprocessRun.resumeTree(root.id)
    expect(typesOf(tree.root).slice(-4)).to.deep.equal(['approval/requested', 'approval/decided', 'tool/result', 'turn/end'])
    expect(tree.root.session.events.at(-3)!.data).to.deep.equal({ requestId: 'req-1', approved: false, reason: 'interrupted', by: 'resume' })
    expect((tree.root.session.events.at(-2)!.data as { isError: boolean }).isError).to.equal(true)
    await tree.dispose()
  })

  it('keeps the text a step had streamed when the process stopped, as an interrupted message', async () => {
    const first = await durableHost()
    const root = await first.agent()
    first.scripted.push('hang')
    root.followup('tell me')
    await until(root, 'assistant/delta')
    const dir = await crashCopy(first)
    root.cancel({ kind: 'user' })

    const second = await durableHost(dir)
    const tree = await second.root.inprocessRun.resumeTree(root.id)
    expect(tree.root.session.events.slice(-2).map((event) => event.data)).to.deep.equal([
      { turn: 1, step: 1, content: [{ type: 'text', text: 'partial' }], interrupted: true },
      { turn: 1, reason: { kind: 'interrupted' } },
    ])
    await tree.dispose()
  })

  it('closes the open turn of every agent of the tree, the running child included', async () => {
    const first = await durableHost()
    const root = await first.agent()
    first.scripted.push('hang')
    const child = await first.root.inprocessRun.spawn({ parent: root, prompt: 'task', signal: signal() })
    await until(child.agent, 'assistant/delta')
    const dir = await crashCopy(first)
    await child.dispose()

    const second = await durableHost(dir)
    const tree = await second.root.inprocessRun.resumeTree(root.id)
    expect(tree.agents.map((agent) => agent.id)).to.deep.equal([child.id])
    expect(tree.agents[0]!.session.events.at(-1)!.data).to.deep.equal({ turn: 1, reason: { kind: 'interrupted' } })
    await tree.dispose()
  })

  it('refuses a second resume of a tree running in this process, and one already being resumed', async () => {
    const first = await durableHost()
    const root = await first.agent()
    first.scripted.push({ text: 'child done' })
    const child = await first.root.inprocessRun.spawn({ parent: root, prompt: 'task', signal: signal() })
    await child.result
    const dir = await crashCopy(first)

    const second = await durableHost(dir)
    // a tree whose child alone is live here is running here too
    const handle = await second.root.agents.resume(child.id)
    const partial = await rejectionOf(second.root.inprocessRun.resumeTree(root.id))
    expect(partial.message).to.equal(`tree ${root.id} is already running in this process`)
    expect(second.root.agents.list()).to.deep.equal([handle.agent])
    await handle.dispose()

    const racing = second.root.inprocessRun.resumeTree(root.id)
    const raced = await rejectionOf(second.root.inprocessRun.resumeTree(root.id))
    expect(raced.message).to.equal(`tree ${root.id} is already running in this process`)
    const tree = await racing
    const again = await rejectionOf(second.root.inprocessRun.resumeTree(root.id))
    expect(again.message).to.equal(`tree ${root.id} is already running in this process`)
    expect(second.root.agents.list()).to.deep.equal([tree.root])
    await tree.dispose()
  })

  it('never republishes a disposed child, and refuses a disposed root', async () => {
    const first = await durableHost()
    const root = await first.agent()
    first.scripted.push({ text: 'kept' }, { text: 'gone' })
    const kept = await first.root.inprocessRun.spawn({ parent: root, prompt: 'a', signal: signal() })
    await kept.result
    const gone = await first.root.inprocessRun.spawn({ parent: root, prompt: 'b', signal: signal() })
    await gone.result
    await gone.dispose()
    const dir = await crashCopy(first)

    const second = await durableHost(dir)
    const tree = await second.root.inprocessRun.resumeTree(root.id)
    expect(tree.agents.map((agent) => agent.id)).to.deep.equal([kept.id])
    await tree.dispose()
    await second.files.flush()
    const refused = await rejectionOf(second.root.inprocessRun.resumeTree(root.id))
    expect(refused.message).to.equal(`tree ${root.id} was disposed and cannot be resumed`)
    expect(second.root.agents.list()).to.deep.equal([])
  })

  it('gives a resumed child the persona, tool ceiling and tool filter its start registered', async () => {
    const tool = (name: string) => ({ name, description: name, parameters: { type: 'object' }, execute: async () => ({ isError: false, content: [] }) })
    const first = await durableHost()
    for (const name of ['read', 'write', 'shell']) first.root.tools.register(tool(name))
    const root = await first.agent()
    root.ctx.tools.restrict({ deny: ['shell'] })
    first.scripted.push({ text: 'done' })
    const run = await first.root.inprocessRun.spawn({
      parent: root,
      prompt: 'task',
      persona: 'You review code.',
      toolFilter: { deny: ['write'] },
      inheritRestrictions: true,
      signal: new AbortController().signal,
    })
    await run.result
    expect(first.root.tools.schemas(run.agent).map((schema) => schema.name)).to.deep.equal(['read'])
    const dir = await crashCopy(first)

    const second = await durableHost(dir)
    for (const name of ['read', 'write', 'shell']) second.root.tools.register(tool(name))
    const tree = await second.root.inprocessRun.resumeTree(root.id)
    const [child] = tree.agents
    expect(second.root.tools.schemas(child).map((schema) => schema.name)).to.deep.equal(['read'])
    expect((await second.root.systemPrompt.assemble(child!)).text).to.include('You review code.')
    await tree.dispose()
  })
})
