import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'chai'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import TreeBudget from '../../plugins/tree-budget/index.ts'
import { createFilesHost, type FilesHost, scriptedOptions } from '../session-files/fixture.ts'
import { scene } from '../support/scene.ts'

/** A host playing one process: session files in `dir`, the driver, and TreeBudget with `config`. */
async function budgetProcess(dir: string, config: TreeBudget.Config): Promise<FilesHost> {
  return createFilesHost(dir, {}, [InProcessRun, [TreeBudget, config]])
}

describe('TreeBudget across resume (SPEC §9)', () => {
  let dir: string

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'tree-budget-'))
  })

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('gives a resumed child what its tree had left, not a fresh budget', async () => {
    const first = await budgetProcess(dir, { maxTokens: 100 })
    const parent = await first.agent()
    first.scripted.push({ text: 'parent', usage: { inputTokens: 30, outputTokens: 0 } }, { text: 'child', usage: { inputTokens: 40, outputTokens: 5 } })
    parent.followup('hello')
    await parent.whenIdle()
    const run = await first.root.inprocessRun.spawn({ parent, prompt: 'task', signal: new AbortController().signal })
    await run.result
    const childId = run.id
    await run.dispose()
    await first.files.flush()
    await first.end()

    const second = await budgetProcess(dir, { maxTokens: 100 })
    const handle = await second.root.agents.resume(childId, { agentOptions: scriptedOptions })
    // 30 spent by the parent before the grant, 45 by the child since
    expect(second.root.treeBudget.remaining(handle.agent).tokens).to.equal(25)
    expect(second.root.treeBudget.usage(handle.agent)).to.deep.equal({ inputTokens: 40, outputTokens: 5, modelRequests: 1, children: 0 })
    await handle.dispose()
    await second.end()
  })

  it('keeps a resumed child inside the reservation it was started with', async () => {
    const first = await budgetProcess(dir, {})
    const parent = await first.agent()
    first.scripted.push({ text: 'child', usage: { inputTokens: 15, outputTokens: 5 } })
    const run = await first.root.inprocessRun.spawn({ parent, prompt: 'task', signal: new AbortController().signal, budget: { tokens: 30 } })
    await run.result
    const childId = run.id
    await run.dispose()
    await first.files.flush()
    await first.end()

    const second = await budgetProcess(dir, {})
    const handle = await second.root.agents.resume(childId, { agentOptions: scriptedOptions })
    expect(second.root.treeBudget.remaining(handle.agent).tokens).to.equal(10)
    await handle.dispose()
    await second.end()
  })

  it("restores a resumed parent's subtree usage from the records of its settled children", async () => {
    const first = await budgetProcess(dir, { maxChildren: 3 })
    const parent = await first.agent()
    first.scripted.push({ text: 'child', usage: { inputTokens: 7, outputTokens: 3 } })
    const run = await first.root.inprocessRun.spawn({ parent, prompt: 'task', signal: new AbortController().signal })
    await run.result
    await run.dispose()
    const middleId = parent.id
    await first.files.flush()
    await first.end()

    const second = await budgetProcess(dir, { maxChildren: 3 })
    const handle = await second.root.agents.resume(middleId, { agentOptions: scriptedOptions })
    expect(second.root.treeBudget.usage(handle.agent)).to.deep.equal({ inputTokens: 7, outputTokens: 3, modelRequests: 1, children: 1 })
    expect(second.root.treeBudget.remaining(handle.agent).children).to.equal(2)
    await handle.dispose()
    await second.end()
  })

  it('counts a resumed child of a live parent once: its past stays counted, its new messages add', async () => {
    const host = await budgetProcess(dir, {})
    const parent = await host.agent()
    host.scripted.push({ text: 'child', usage: { inputTokens: 10, outputTokens: 2 } })
    const run = await host.root.inprocessRun.spawn({ parent, prompt: 'task', signal: new AbortController().signal })
    await run.result
    const childId = run.id
    await run.dispose()
    await host.files.flush()
    const handle = await host.root.agents.resume(childId, { owner: parent, agentOptions: scriptedOptions })
    expect(host.root.treeBudget.usage(parent)).to.deep.equal({ inputTokens: 10, outputTokens: 2, modelRequests: 1, children: 1 })
    host.scripted.push({ text: 'again', usage: { inputTokens: 3, outputTokens: 1 } })
    handle.agent.followup('more')
    await handle.agent.whenIdle()
    expect(host.root.treeBudget.usage(parent)).to.deep.equal({ inputTokens: 13, outputTokens: 3, modelRequests: 2, children: 1 })
    expect(host.root.treeBudget.usage(handle.agent)).to.deep.equal({ inputTokens: 13, outputTokens: 3, modelRequests: 2, children: 0 })
    await handle.dispose()
    await host.end()
  })

  /** A parent and its settled, disposed child that spent 5 of a 30-token reservation; files flushed. */
  async function reservedChild(host: FilesHost) {
    const parent = await host.agent()
    host.scripted.push({ text: 'child', usage: { inputTokens: 3, outputTokens: 2 } })
    const run = await host.root.inprocessRun.spawn({ parent, prompt: 'task', signal: new AbortController().signal, budget: { tokens: 30 } })
    await run.result
    await run.dispose()
    await host.files.flush()
    return { parent, child: run.agent }
  }

  it("gives the tree back a resumed child's reservation when the child is disposed", async () => {
    const host = await budgetProcess(dir, { maxTokens: 100 })
    const { parent, child } = await reservedChild(host)
    expect(host.root.treeBudget.remaining(parent).tokens).to.equal(95)
    const handle = await host.root.agents.resume(child.id, { owner: parent, agentOptions: scriptedOptions })
    host.scripted.push({ text: 'again', usage: { inputTokens: 1, outputTokens: 1 } })
    handle.agent.followup('more')
    await handle.agent.whenIdle()
    // 23 of the reservation stay held for the live child
    expect(host.root.treeBudget.remaining(parent).tokens).to.equal(70)
    await handle.dispose()
    expect(host.root.treeBudget.remaining(parent).tokens).to.equal(93)
    await host.end()
  })

  it("holds nothing back from the tree when a disposed child's figures are read", async () => {
    const host = await budgetProcess(dir, { maxTokens: 100 })
    const { parent, child } = await reservedChild(host)
    expect(host.root.treeBudget.remaining(child).tokens).to.equal(25)
    expect(host.root.treeBudget.remaining(child).tokens).to.equal(25)
    expect(host.root.treeBudget.remaining(parent).tokens).to.equal(95)
    await host.end()
  })
})

describe('TreeBudget: resumed headers whose parent chain loops (found by the session-8 hunt)', () => {
  const selfId = 'a0000000-0000-4000-8000-000000000001'
  const firstId = 'a0000000-0000-4000-8000-000000000002'
  const secondId = 'a0000000-0000-4000-8000-000000000003'
  const parents: Record<string, string> = { [selfId]: selfId, [firstId]: secondId, [secondId]: firstId }

  /** A host whose store answers each id above with an empty session naming `parents[id]` as its parent. */
  async function loopScene() {
    const host = await scene({ plugins: [InProcessRun, [TreeBudget, { maxTokens: 100 }]] })
    host.on('session/load', (id: string) =>
      parents[id] ? { header: { id, createdAt: 1, parentSession: parents[id], origin: 'subagent', delegationDepth: 1 }, events: [] } : undefined,
    )
    return host
  }

  it('counts a resumed agent whose header names itself as its parent as a tree of its own', async () => {
    const host = await loopScene()
    const handle = await host.root.agents.resume(selfId, { agentOptions: scriptedOptions })
    const { agent } = handle
    host.scripted.push({ text: 'hi', usage: { inputTokens: 3, outputTokens: 2 } })
    agent.followup('hello')
    await agent.whenIdle()
    expect(agent.session.events.at(-1)?.data).to.deep.equal({ turn: 1, reason: { kind: 'completed' } })
    expect(host.root.treeBudget.usage(agent)).to.deep.equal({ inputTokens: 3, outputTokens: 2, modelRequests: 1, children: 0 })
    expect(host.root.treeBudget.remaining(agent).tokens).to.equal(95)
    await handle.dispose()
  })

  it('puts two live resumed agents whose headers name each other in one tree, counting each message once', async () => {
    const host = await loopScene()
    const handles = [
      await host.root.agents.resume(firstId, { agentOptions: scriptedOptions }),
      await host.root.agents.resume(secondId, { agentOptions: scriptedOptions }),
    ]
    const [first, second] = handles.map((handle) => handle.agent)
    host.scripted.push({ text: 'hi', usage: { inputTokens: 3, outputTokens: 2 } })
    second.followup('hello')
    await second.whenIdle()
    expect(second.session.events.at(-1)?.data).to.deep.equal({ turn: 1, reason: { kind: 'completed' } })
    expect([host.root.treeBudget.remaining(first!).tokens, host.root.treeBudget.remaining(second!).tokens]).to.deep.equal([95, 95])
    await Promise.all(handles.map((handle) => handle.dispose()))
  })
})
