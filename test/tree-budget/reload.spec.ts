import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Context, Fiber } from 'cordis'
import { expect } from 'chai'
import { SubagentBudgetError } from '../../lib/errors.ts'
import type { Agent, SubagentRun } from '../../lib/types.ts'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import TreeBudget from '../../plugins/tree-budget/index.ts'
import { createFilesHost, scriptedOptions } from '../session-files/fixture.ts'
import { rejectionOf, type Scene } from '../support/scene.ts'
import { createBudgetFixture } from './fixture.ts'
import { createLatchModel, type LatchModel } from './latch-model.ts'

/**
 * Unloads the TreeBudget of `fiber` and loads a fresh one with `config` (a hot reload, not a
 * config update). `before` is the index of the scene snapshot taken before the first TreeBudget
 * loaded: the scene's leak check compares with it from now on.
 */
async function reload(host: Scene, fiber: Fiber, before: number, config: TreeBudget.Config): Promise<Fiber> {
  await fiber.dispose()
  const next = host.load(TreeBudget, config)
  await next
  host.baseline = host.snapshots[before]!
  return next
}

/** The root's own turn spending `tokens` input tokens. */
async function rootTurn(host: Scene, root: Agent, tokens: number): Promise<void> {
  host.scripted.push({ text: 'root', usage: { inputTokens: tokens, outputTokens: 0 } })
  root.followup('think')
  await root.whenIdle()
}

/** A settled and disposed child of `root` whose turn spent `tokens` input tokens. */
async function settledChild(host: Scene, root: Agent, tokens: number): Promise<void> {
  host.scripted.push({ text: 'child', usage: { inputTokens: tokens, outputTokens: 0 } })
  const run = await host.root.inprocessRun.spawn({ parent: root, prompt: 'task', signal: new AbortController().signal })
  await run.result
  await run.dispose()
}

function useLatch(host: Scene): LatchModel {
  const latch = createLatchModel()
  host.root.models.register('latch', latch.adapter)
  return latch
}

const latched = { provider: 'latch', model: 'm' }

/**
 * Holds every child's `subagent/setup` until `open()` (then throws `failure`, when given);
 * `entered` resolves once a setup is held. `off()` removes the listener.
 */
function holdSetup(root: Context, failure?: Error): { entered: Promise<void>; open: () => void; off: () => void } {
  let enter!: () => void
  const entered = new Promise<void>((resolve) => (enter = resolve))
  let open!: () => void
  const opened = new Promise<void>((resolve) => (open = resolve))
  const off = root.on('subagent/setup', async () => {
    enter()
    await opened
    if (failure) throw failure
  })
  return { entered, open, off }
}

describe('TreeBudget across an unload and a reload (SPEC §0 hot reload, §9)', () => {
  it('keeps a run live through the unload, and the reloaded plugin budgets the next start', async () => {
    const fixture = await createBudgetFixture({ budget: { maxChildren: 1 } })
    const latch = useLatch(fixture.host)
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request({ prompt: 'a', agentOptions: latched }))
    await latch.entered('a')
    await reload(fixture.host, fixture.fiber, 1, { maxChildren: 0 })
    expect(fixture.host.root.agents.get(run.id)?.status).to.equal('running')
    const error = await rejectionOf(fixture.host.root.inprocessRun.spawn(fixture.request()))
    expect(error).to.be.instanceOf(SubagentBudgetError)
    expect(error.message).to.equal('subagent budget exhausted: children 1 of 0')
    latch.release('a')
    expect((await run.result).stopReason).to.equal('completed')
    await run.dispose()
  })

  it("keeps what a settled child spent when no session store is loaded (root 10 + child 30 of 100 → 60 left)", async () => {
    const fixture = await createBudgetFixture({ budget: { maxTokens: 100 } })
    await rootTurn(fixture.host, fixture.root, 10)
    await settledChild(fixture.host, fixture.root, 30)
    await reload(fixture.host, fixture.fiber, 1, { maxTokens: 100 })
    expect(fixture.host.root.treeBudget.remaining(fixture.root).tokens).to.equal(60)
  })

  it('counts the start and the later usage of a child live across the reload', async () => {
    const fixture = await createBudgetFixture({ budget: { maxChildren: 3 } })
    const latch = useLatch(fixture.host)
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request({ prompt: 'a', agentOptions: latched }))
    await latch.entered('a')
    await reload(fixture.host, fixture.fiber, 1, { maxChildren: 3 })
    const budget = fixture.host.root.treeBudget
    expect(budget.usage(fixture.root)).to.deep.equal({ inputTokens: 0, outputTokens: 0, modelRequests: 1, children: 1 })
    latch.release('a')
    await run.result
    expect([budget.usage(fixture.root), budget.remaining(fixture.root).children]).to.deep.equal([
      { inputTokens: 3, outputTokens: 1, modelRequests: 1, children: 1 },
      2,
    ])
    await run.dispose()
  })

  it('lets no start slip in after a reload during a fan-out that reached maxChildren', async () => {
    const fixture = await createBudgetFixture({ budget: { maxChildren: 2 } })
    const latch = useLatch(fixture.host)
    const runs = await Promise.all(
      ['a', 'b'].map((prompt) => fixture.host.root.inprocessRun.spawn(fixture.request({ prompt, agentOptions: latched }))),
    )
    await Promise.all([latch.entered('a'), latch.entered('b')])
    await reload(fixture.host, fixture.fiber, 1, { maxChildren: 2 })
    const error = await rejectionOf(fixture.host.root.inprocessRun.spawn(fixture.request()))
    expect([error instanceof SubagentBudgetError, error.message]).to.deep.equal([true, 'subagent budget exhausted: children 2 of 2'])
    latch.release('a')
    latch.release('b')
    for (const run of runs) {
      await run.result
      await run.dispose()
    }
  })

  it('keeps what the tree spent across two reloads in a row, counting each part once', async () => {
    const fixture = await createBudgetFixture({ budget: { maxTokens: 100 } })
    await rootTurn(fixture.host, fixture.root, 10)
    await settledChild(fixture.host, fixture.root, 30)
    const second = await reload(fixture.host, fixture.fiber, 1, { maxTokens: 100 })
    await settledChild(fixture.host, fixture.root, 20)
    await reload(fixture.host, second, 1, { maxTokens: 100 })
    expect(fixture.host.root.treeBudget.usage(fixture.root)).to.deep.equal({ inputTokens: 60, outputTokens: 0, modelRequests: 3, children: 2 })
    expect(fixture.host.root.treeBudget.remaining(fixture.root).tokens).to.equal(40)
  })

  it('counts a start that waited in the queue at the reload, once it goes on', async () => {
    const fixture = await createBudgetFixture({ budget: { maxConcurrent: 1, maxChildren: 5 } })
    const latch = useLatch(fixture.host)
    const first = await fixture.host.root.inprocessRun.spawn(fixture.request({ prompt: 'a', agentOptions: latched }))
    await latch.entered('a')
    const waiting = fixture.host.root.inprocessRun.spawn(fixture.request({ prompt: 'b', agentOptions: latched }))
    await reload(fixture.host, fixture.fiber, 1, { maxConcurrent: 1, maxChildren: 5 })
    // the unloaded budget lets its waiting starts go on (its Known limit): the reloaded one counts them
    const second = await waiting
    await latch.entered('b')
    latch.release('a')
    latch.release('b')
    await Promise.all([first.result, second.result])
    const budget = fixture.host.root.treeBudget
    expect([budget.usage(fixture.root), budget.remaining(fixture.root).children]).to.deep.equal([
      { inputTokens: 6, outputTokens: 2, modelRequests: 2, children: 2 },
      3,
    ])
    await first.dispose()
    await second.dispose()
  })

  it('makes a start after the reload wait while a run admitted before it holds the only slot', async () => {
    const fixture = await createBudgetFixture({ budget: { maxConcurrent: 1 } })
    const latch = useLatch(fixture.host)
    const first = await fixture.host.root.inprocessRun.spawn(fixture.request({ prompt: 'a', agentOptions: latched }))
    await latch.entered('a')
    await reload(fixture.host, fixture.fiber, 1, { maxConcurrent: 1 })
    let secondStarted = false
    const second = fixture.host.root.inprocessRun.spawn(fixture.request({ prompt: 'b', agentOptions: latched })).then((run) => {
      secondStarted = true
      return run
    })
    // a start under another root goes the same way through creation to its first model request:
    // had the start above been let in, its child would exist by then
    const other = await fixture.host.agent()
    const third = await fixture.host.root.inprocessRun.spawn(fixture.request({ parent: other, prompt: 'c', agentOptions: latched }))
    await latch.entered('c')
    expect([secondStarted, fixture.host.root.agents.list().length]).to.deep.equal([false, 4])
    latch.release('a')
    latch.release('b')
    latch.release('c')
    await first.result
    const run = await second
    expect((await run.result).stopReason).to.equal('completed')
    await third.result
    await Promise.all([first.dispose(), run.dispose(), third.dispose()])
  })

  it("holds a live child's reservation back across the reload and keeps its subtree inside it", async () => {
    const fixture = await createBudgetFixture({ budget: { maxTokens: 100 } })
    const latch = useLatch(fixture.host)
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request({ prompt: 'a', agentOptions: latched, budget: { tokens: 10 } }))
    await latch.entered('a')
    await reload(fixture.host, fixture.fiber, 1, { maxTokens: 100 })
    const budget = fixture.host.root.treeBudget
    expect([budget.remaining(fixture.root).tokens, budget.remaining(run.agent).tokens]).to.deep.equal([90, 10])
    latch.release('a')
    await run.result
    expect([budget.remaining(fixture.root).tokens, budget.remaining(run.agent).tokens]).to.deep.equal([90, 6])
    await run.dispose()
    expect(budget.remaining(fixture.root).tokens).to.equal(96)
  })

  it('adopts every live agent below the one whose request met the reloaded budget first, reservations included', async () => {
    const fixture = await createBudgetFixture({ budget: { maxTokens: 100 } })
    const latch = useLatch(fixture.host)
    const grandchildren: SubagentRun[] = []
    fixture.host.root.tools.register({
      name: 'fan',
      description: 'starts two grandchildren',
      parameters: { type: 'object' },
      async execute(_args, exec) {
        const start = (prompt: string, budget?: { tokens: number }) =>
          fixture.host.root.inprocessRun.spawn({ parent: exec.agent!, prompt, signal: new AbortController().signal, agentOptions: latched, budget })
        grandchildren.push(await start('g1'), await start('g2', { tokens: 20 }))
        for (const run of grandchildren) await run.result
        await Promise.all(grandchildren.map((run) => run.dispose()))
        return 'ok'
      },
    })
    fixture.host.scripted.push(
      { toolCalls: [{ id: 'f', name: 'fan', arguments: '{}' }], usage: { inputTokens: 10, outputTokens: 0 } },
      { text: 'p', usage: { inputTokens: 5, outputTokens: 0 } },
    )
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
    await Promise.all([latch.entered('g1'), latch.entered('g2')])
    await reload(fixture.host, fixture.fiber, 1, { maxTokens: 100 })
    latch.release('g1')
    await grandchildren[0]!.result
    // spent: 10 by the child, 4 by g1; held back: g2's 20
    expect(fixture.host.root.treeBudget.remaining(fixture.root).tokens).to.equal(66)
    latch.release('g2')
    expect((await run.result).stopReason).to.equal('completed')
    await run.dispose()
  })

  it('counts once the start of a child admitted before the unload and published after it', async () => {
    const fixture = await createBudgetFixture({ budget: { maxChildren: 5 } })
    const { entered, open, off } = holdSetup(fixture.host.root)
    const starting = fixture.host.root.inprocessRun.spawn(fixture.request())
    await entered
    await reload(fixture.host, fixture.fiber, 1, { maxChildren: 5 })
    fixture.host.scripted.push({ text: 'child', usage: { inputTokens: 2, outputTokens: 1 } })
    open()
    const run = await starting
    await run.result
    off()
    expect(fixture.host.root.treeBudget.usage(fixture.root)).to.deep.equal({ inputTokens: 2, outputTokens: 1, modelRequests: 1, children: 1 })
    await run.dispose()
  })

  it('gives back the start of a child admitted before the unload whose creation fails after it', async () => {
    const fixture = await createBudgetFixture({ budget: { maxChildren: 5 } })
    const { entered, open, off } = holdSetup(fixture.host.root, new Error('setup failed'))
    const starting = fixture.host.root.inprocessRun.spawn(fixture.request())
    await entered
    await reload(fixture.host, fixture.fiber, 1, { maxChildren: 5 })
    open()
    const error = await rejectionOf(starting)
    off()
    const budget = fixture.host.root.treeBudget
    expect([error.message, budget.usage(fixture.root).children, budget.remaining(fixture.root).children]).to.deep.equal(['setup failed', 0, 5])
  })

  describe('with a session store loaded', () => {
    let dir: string

    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), 'tree-budget-reload-'))
    })

    afterEach(async () => {
      await rm(dir, { recursive: true, force: true })
    })

    /**
     * A first process: a root whose child lives across a reload and spends 3 + 1 tokens after it;
     * both are disposed before the host ends (so that last unload writes no snapshot into their
     * files), and the files are flushed.
     */
    async function childSpentAcrossReload(): Promise<{ rootId: string; childId: string }> {
      const first = await createFilesHost(dir, {}, [InProcessRun, [TreeBudget, { maxTokens: 100 }]])
      const latch = useLatch(first)
      const root = await first.create({})
      const run = await first.root.inprocessRun.spawn({ parent: root.agent, prompt: 'a', signal: new AbortController().signal, agentOptions: latched })
      await latch.entered('a')
      await reload(first, first.fibers[2]!, 2, { maxTokens: 100 })
      latch.release('a')
      await run.result
      await run.agent.whenIdle()
      await run.dispose()
      await root.dispose()
      await first.files.flush()
      await first.end()
      return { rootId: root.agent.id, childId: run.id }
    }

    it('keeps what a settled child spent (root 10 + child 30 of 100 → 60 left)', async () => {
      const host = await createFilesHost(dir, {}, [InProcessRun, [TreeBudget, { maxTokens: 100 }]])
      const root = await host.agent()
      await rootTurn(host, root, 10)
      await settledChild(host, root, 30)
      await reload(host, host.fibers[2]!, 2, { maxTokens: 100 })
      expect(host.root.treeBudget.remaining(root).tokens).to.equal(60)
      await host.end()
    })

    it('charges nothing again when a child live across the reload is resumed under its live parent', async () => {
      const host = await createFilesHost(dir, {}, [InProcessRun, [TreeBudget, { maxTokens: 100 }]])
      const latch = useLatch(host)
      const root = await host.agent()
      const run = await host.root.inprocessRun.spawn({ parent: root, prompt: 'a', signal: new AbortController().signal, agentOptions: latched })
      await latch.entered('a')
      await reload(host, host.fibers[2]!, 2, { maxTokens: 100 })
      latch.release('a')
      await run.result
      await run.agent.whenIdle()
      await run.dispose()
      await host.files.flush()
      const handle = await host.root.agents.resume(run.id, { agentOptions: scriptedOptions })
      const budget = host.root.treeBudget
      // the resumed child's node is made as it is first read: that is when its subtree joins the tree
      expect([budget.usage(handle.agent), budget.usage(root), budget.remaining(root).tokens]).to.deep.equal([
        { inputTokens: 3, outputTokens: 1, modelRequests: 1, children: 0 },
        { inputTokens: 3, outputTokens: 1, modelRequests: 1, children: 1 },
        96,
      ])
      await handle.dispose()
      await host.end()
    })

    it('charges nothing again when that child is resumed under its parent resumed in a later process', async () => {
      const { rootId, childId } = await childSpentAcrossReload()

      const second = await createFilesHost(dir, {}, [InProcessRun, [TreeBudget, { maxTokens: 100 }]])
      const parent = await second.root.agents.resume(rootId, { agentOptions: scriptedOptions })
      const child = await second.root.agents.resume(childId, { agentOptions: scriptedOptions })
      expect([second.root.treeBudget.usage(parent.agent), second.root.treeBudget.remaining(parent.agent).tokens]).to.deep.equal([
        { inputTokens: 3, outputTokens: 1, modelRequests: 1, children: 1 },
        96,
      ])
      await child.dispose()
      await parent.dispose()
      await second.end()
    })

    it("writes what a child live across the reload spent after it into its parent's file, without a second start", async () => {
      const { rootId } = await childSpentAcrossReload()

      const second = await createFilesHost(dir, {}, [InProcessRun, [TreeBudget, { maxTokens: 100 }]])
      const handle = await second.root.agents.resume(rootId, { agentOptions: scriptedOptions })
      expect([second.root.treeBudget.usage(handle.agent), second.root.treeBudget.remaining(handle.agent).tokens]).to.deep.equal([
        { inputTokens: 3, outputTokens: 1, modelRequests: 1, children: 1 },
        96,
      ])
      await handle.dispose()
      await second.end()
    })
  })
})
