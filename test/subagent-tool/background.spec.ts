import { expect } from 'chai'
import type { Context, Fiber } from 'cordis'
import { BACKGROUND_DELIVERED_EVENT, BACKGROUND_START_EVENT } from '../../lib/delegation/background-record.ts'
import type { Agent, ContentBlock, ToolResult } from '../../lib/types.ts'
import SubagentTool from '../../plugins/subagent-tool/index.ts'
import { eventsOf } from '../support/harness.ts'
import { createFixture, type Fixture, textOf } from './fixture.ts'
import { installRoutedModel, ROUTED_PROVIDER, type RoutedModel } from './routed-model.ts'

interface BackgroundFixture extends Fixture {
  model: RoutedModel
  /** `subagent` results the parent's calls produced, in order. */
  results: ToolResult[]
  /** Plugin-sourced user messages of the parent, as text. */
  deliveries(): string[]
}

async function createBackgroundFixture(tool?: SubagentTool.Config): Promise<BackgroundFixture> {
  const fixture = await createFixture({ parent: { provider: ROUTED_PROVIDER }, ...(tool ? { tool } : {}) })
  const model = installRoutedModel(fixture.host.root, (request) => request.agent === fixture.parent)
  const results: ToolResult[] = []
  fixture.parent.ctx.on('tools/result', (exec, result) => {
    if (exec.name === 'subagent') results.push(result)
  })
  return {
    ...fixture,
    model,
    results,
    deliveries: () =>
      eventsOf(fixture.parent, 'user/message')
        .filter((data) => (data as { source: { kind: string } }).source.kind === 'plugin')
        .map((data) => ((data as { content: ContentBlock[] }).content[0] as { text: string }).text),
  }
}

/** One parent turn that starts a background child with `args`, then ends with `started`. */
async function startInBackground(fixture: BackgroundFixture, args: Record<string, unknown>): Promise<string> {
  fixture.model.parent({ toolCalls: [{ id: 'call_bg', name: 'subagent', arguments: { background: true, ...args } }] }, { text: 'started' })
  fixture.parent.followup('start it')
  await fixture.parent.whenIdle()
  return textOf(fixture.results.at(-1)!)
}

function runIdOf(startText: string): string {
  const match = / as run ([0-9a-f-]+);/.exec(startText)
  expect(match, `no run id in ${JSON.stringify(startText)}`).to.not.equal(null)
  return match![1]!
}

/** Resolves after the parent's next plugin-sourced turn has ended. */
async function delivered(fixture: BackgroundFixture): Promise<void> {
  await fixture.host.root.subagentTool.settled(fixture.parent)
  await fixture.parent.whenIdle()
}

/** Registers the tool `wait`, which runs until its signal aborts; resolves once a call entered it. */
function registerWaitTool(fixture: { host: { root: Context } }): Promise<void> {
  return new Promise<void>((entered) => {
    fixture.host.root.tools.register({
      name: 'wait',
      description: 'waits for its signal',
      parameters: { type: 'object' },
      execute: (_args, exec) =>
        new Promise((_, reject) => {
          entered()
          exec.signal.addEventListener('abort', () => reject(exec.signal.reason), { once: true })
        }),
    })
  })
}

describe('subagent tool: background children (SPEC §8.2)', () => {
  it('returns the exact start text at once while the child is still running', async () => {
    const fixture = await createBackgroundFixture()
    const gate = fixture.model.child('count the files')
    const text = await startInBackground(fixture, { prompt: 'count the files', label: 'census' })
    const runId = runIdOf(text)
    expect(text).to.equal(`subagent "census" started in the background as run ${runId}; its result will arrive as a message when it finishes.`)
    expect(fixture.results.at(-1)!.isError).to.equal(false)
    expect(fixture.host.root.agents.get(runId)?.status).to.equal('running')
    expect(fixture.host.root.subagentTool.pending(fixture.parent)).to.deep.equal([{ runId, label: 'census' }])
    fixture.model.parent({ text: 'thanks' })
    gate.answer({ text: '3 files' })
    await delivered(fixture)
  })

  it('names a run without a label by its run id', async () => {
    const fixture = await createBackgroundFixture()
    const gate = fixture.model.child('task')
    const text = await startInBackground(fixture, { prompt: 'task' })
    const runId = runIdOf(text)
    expect(text).to.equal(`subagent "${runId}" started in the background as run ${runId}; its result will arrive as a message when it finishes.`)
    expect(fixture.host.root.subagentTool.pending(fixture.parent)).to.deep.equal([{ runId, label: runId }])
    fixture.model.parent({ text: 'thanks' })
    gate.answer({ text: 'done' })
    await delivered(fixture)
    expect(fixture.deliveries()).to.deep.equal([`Background subagent "${runId}" (run ${runId}) finished:\ndone`])
  })

  it('delivers one plugin message with the foreground text, then disposes the child', async () => {
    const fixture = await createBackgroundFixture()
    const gate = fixture.model.child('count the files')
    const runId = runIdOf(await startInBackground(fixture, { prompt: 'count the files', label: 'census' }))
    fixture.model.parent({ text: 'noted' })
    gate.answer({ text: 'there are 3 files' })
    await delivered(fixture)
    const message = `Background subagent "census" (run ${runId}) finished:\nthere are 3 files`
    const userMessages = eventsOf(fixture.parent, 'user/message')
    expect(userMessages.at(-1)).to.deep.equal({ content: [{ type: 'text', text: message }], source: { kind: 'plugin' } })
    expect(fixture.deliveries()).to.deep.equal([message])
    expect(fixture.model.parentRequests.at(-1)!.messages.at(-1)).to.deep.equal({ role: 'user', content: [{ type: 'text', text: message }] })
    expect(fixture.host.root.agents.get(runId)).to.equal(undefined)
    expect(fixture.host.root.sessions.get(runId)).to.equal(undefined)
    expect(fixture.host.root.subagentTool.pending(fixture.parent)).to.deep.equal([])
  })

  it('delivers a failed child as the foreground error text with its diagnostic', async () => {
    const fixture = await createBackgroundFixture()
    const gate = fixture.model.child('task')
    const runId = runIdOf(await startInBackground(fixture, { prompt: 'task', label: 'flaky' }))
    fixture.model.parent({ text: 'noted' })
    gate.fail(new Error('upstream 503'))
    await delivered(fixture)
    expect(fixture.deliveries()).to.deep.equal([
      `Background subagent "flaky" (run ${runId}) finished:\nError: subagent run failed\nDiagnostic: the child turn failed: upstream 503`,
    ])
  })

  it('delivers a truncated child with its heading, diagnostic and partial output', async () => {
    const fixture = await createBackgroundFixture()
    const gate = fixture.model.child('task')
    const runId = runIdOf(await startInBackground(fixture, { prompt: 'task', label: 'long' }))
    fixture.model.parent({ text: 'noted' })
    gate.answer({ text: 'half an answer', finish: 'max-tokens' })
    await delivered(fixture)
    expect(fixture.deliveries()).to.deep.equal([
      `Background subagent "long" (run ${runId}) finished:\nError: subagent run hit its token limit before finishing\nDiagnostic: the child hit its token limit\nPartial output before the run ended:\nhalf an answer`,
    ])
  })

  it('delivers a child cancelled on its own as the cancelled heading', async () => {
    const fixture = await createBackgroundFixture()
    const gate = fixture.model.child('task')
    const runId = runIdOf(await startInBackground(fixture, { prompt: 'task', label: 'stopped' }))
    await gate.entered
    fixture.model.parent({ text: 'noted' })
    fixture.host.root.agents.get(runId)!.cancel({ kind: 'user' })
    await delivered(fixture)
    expect(fixture.deliveries()).to.deep.equal([
      `Background subagent "stopped" (run ${runId}) finished:\nError: subagent run was cancelled\nDiagnostic: the run was cancelled (user)`,
    ])
  })

  it("delivers a rejected result as the host's Error: text", async () => {
    const fixture = await createBackgroundFixture()
    const off = fixture.host.root.on('subagent/settle', () => {
      throw new Error('settle listener broke')
    })
    const gate = fixture.model.child('task')
    const runId = runIdOf(await startInBackground(fixture, { prompt: 'task', label: 'broken' }))
    fixture.model.parent({ text: 'noted' })
    gate.answer({ text: 'fine' })
    await delivered(fixture)
    off()
    expect(fixture.deliveries()).to.deep.equal([`Background subagent "broken" (run ${runId}) finished:\nError: settle listener broke`])
  })

  it('holds a result that arrives while the parent is mid-turn until that turn ends, then delivers it once', async () => {
    const fixture = await createBackgroundFixture()
    const gate = fixture.model.child('task')
    const runId = runIdOf(await startInBackground(fixture, { prompt: 'task', label: 'early' }))
    // the parent's next turn runs a tool that finishes only after the child's result settled
    let releaseTool!: () => void
    const toolHeld = new Promise<void>((resolve) => (releaseTool = resolve))
    let toolEntered!: () => void
    const inTool = new Promise<void>((resolve) => (toolEntered = resolve))
    fixture.host.root.tools.register({
      name: 'slow',
      description: 'waits',
      parameters: { type: 'object' },
      execute: async () => {
        toolEntered()
        await toolHeld
        return 'slow done'
      },
    })
    fixture.model.parent({ toolCalls: [{ id: 'call_slow', name: 'slow', arguments: {} }] }, { text: 'turn 2 done' }, { text: 'got it' })
    fixture.parent.followup('do the slow thing')
    await inTool
    gate.answer({ text: 'result' })
    const runs = fixture.host.root.agents.get(runId)!
    await runs.whenIdle()
    await new Promise(setImmediate)
    expect(fixture.deliveries()).to.deep.equal([])
    releaseTool()
    await delivered(fixture)
    const turns = eventsOf(fixture.parent, 'turn/end').map((data) => (data as { reason: { kind: string } }).reason.kind)
    expect(turns).to.deep.equal(['completed', 'completed', 'completed'])
    expect(fixture.deliveries()).to.deep.equal([`Background subagent "early" (run ${runId}) finished:\nresult`])
    // the delivery is the third turn's message, after the second turn's answer
    const lastTurnMessages = fixture.model.parentRequests.at(-1)!.messages
    expect(lastTurnMessages.at(-2)).to.deep.equal({ role: 'assistant', content: [{ type: 'text', text: 'turn 2 done' }] })
  })

  it("does not cancel a background child when the parent's turn is cancelled, and still delivers", async () => {
    const fixture = await createBackgroundFixture()
    const gate = fixture.model.child('task')
    const runId = runIdOf(await startInBackground(fixture, { prompt: 'task', label: 'survivor' }))
    const inTool = registerWaitTool(fixture)
    fixture.model.parent({ toolCalls: [{ id: 'call_wait', name: 'wait', arguments: {} }] }, { text: 'got it' })
    fixture.parent.followup('wait')
    await inTool
    fixture.parent.cancel({ kind: 'user' })
    await fixture.parent.whenIdle()
    expect(fixture.host.root.agents.get(runId)?.status).to.equal('running')
    gate.answer({ text: 'still here' })
    await delivered(fixture)
    expect(fixture.deliveries()).to.deep.equal([`Background subagent "survivor" (run ${runId}) finished:\nstill here`])
  })

  it('cancels and disposes background children with their parent and delivers nothing', async () => {
    const fixture = await createBackgroundFixture()
    fixture.model.child('one')
    fixture.model.child('two')
    fixture.model.parent(
      {
        toolCalls: [
          { id: 'call_1', name: 'subagent', arguments: { prompt: 'one', background: true } },
          { id: 'call_2', name: 'subagent', arguments: { prompt: 'two', background: true } },
        ],
      },
      { text: 'both started' },
    )
    fixture.parent.followup('start two')
    await fixture.parent.whenIdle()
    const pending = fixture.host.root.subagentTool.pending(fixture.parent)
    expect(pending).to.have.length(2)
    const children = pending.map(({ runId }) => fixture.host.root.agents.get(runId)!)
    const parent: Agent = fixture.parent
    await fixture.parentHandle.dispose()
    expect(fixture.host.root.subagentTool.pending(parent)).to.deep.equal([])
    for (const child of children) expect(fixture.host.root.agents.get(child.id)).to.equal(undefined)
    await fixture.host.root.subagentTool.settled()
    expect(eventsOf(parent, 'user/message')).to.have.length(1)
    expect(eventsOf(parent, BACKGROUND_DELIVERED_EVENT)).to.deep.equal([])
  })

  it('delivers nothing when the parent is disposed while a settled result waits for its turn to end (SPEC §8.2)', async () => {
    const fixture = await createBackgroundFixture()
    const gate = fixture.model.child('task')
    const runId = runIdOf(await startInBackground(fixture, { prompt: 'task', label: 'late' }))
    const inTool = registerWaitTool(fixture)
    fixture.model.parent({ toolCalls: [{ id: 'call_wait', name: 'wait', arguments: {} }] })
    fixture.parent.followup('wait')
    await inTool
    gate.answer({ text: 'too late' })
    await fixture.host.root.agents.get(runId)!.whenIdle()
    const parent: Agent = fixture.parent
    await fixture.parentHandle.dispose()
    await fixture.host.root.subagentTool.settled()
    expect(eventsOf(parent, BACKGROUND_DELIVERED_EVENT)).to.deep.equal([])
    expect(fixture.deliveries()).to.deep.equal([])
    expect(fixture.host.root.agents.get(runId)).to.equal(undefined)
    expect(fixture.host.logged()).to.deep.equal([])
  })

  it('keeps background runs across a hot reload of SubagentTool and still delivers them', async () => {
    const fixture = await createBackgroundFixture()
    const gate = fixture.model.child('task')
    const runId = runIdOf(await startInBackground(fixture, { prompt: 'task', label: 'reloaded' }))
    const fiber: Fiber | undefined = [...(fixture.host.root.registry.get(SubagentTool)?.fibers ?? [])][0]
    expect(fiber, 'the SubagentTool fiber').to.not.equal(undefined)
    await fiber!.dispose()
    expect(fixture.host.root.tools.get('subagent')).to.equal(undefined)
    expect(fixture.host.root.agents.get(runId)?.status).to.equal('running')
    await fixture.host.root.plugin(SubagentTool)
    expect(fixture.host.root.subagentTool.pending(fixture.parent)).to.deep.equal([{ runId, label: 'reloaded' }])
    fixture.model.parent({ text: 'noted' })
    gate.answer({ text: 'survived the reload' })
    await delivered(fixture)
    expect(fixture.deliveries()).to.deep.equal([`Background subagent "reloaded" (run ${runId}) finished:\nsurvived the reload`])
  })

  it('records the start and the delivery in the parent session', async () => {
    const fixture = await createBackgroundFixture()
    const gate = fixture.model.child('task')
    const runId = runIdOf(await startInBackground(fixture, { prompt: 'task', label: 'logged' }))
    expect(eventsOf(fixture.parent, BACKGROUND_START_EVENT)).to.deep.equal([{ runId, label: 'logged' }])
    expect(eventsOf(fixture.parent, BACKGROUND_DELIVERED_EVENT)).to.deep.equal([])
    fixture.model.parent({ text: 'noted' })
    gate.answer({ text: 'ok' })
    await delivered(fixture)
    expect(eventsOf(fixture.parent, BACKGROUND_DELIVERED_EVENT)).to.deep.equal([{ runId }])
  })

  it('reports a start error of a background call like a foreground one and leaves nothing pending', async () => {
    const fixture = await createBackgroundFixture()
    fixture.model.parent(
      { toolCalls: [{ id: 'call_bg', name: 'subagent', arguments: { prompt: 'task', background: true, tools: { allow: ['nope'] } } }] },
      { text: 'failed' },
    )
    fixture.parent.followup('start it')
    await fixture.parent.whenIdle()
    expect(textOf(fixture.results[0]!)).to.equal('Error: subagent tool "nope" is not available to the parent')
    expect(fixture.host.root.subagentTool.pending(fixture.parent)).to.deep.equal([])
    expect(eventsOf(fixture.parent, BACKGROUND_START_EVENT)).to.deep.equal([])
  })

  it('rejects a pending() query for something that is not an agent with a TypeError naming the field', async () => {
    const fixture = await createBackgroundFixture()
    for (const bad of [undefined, null, 'parent', { id: 7 }]) {
      expect(() => fixture.host.root.subagentTool.pending(bad as never)).to.throw(TypeError, 'subagentTool.pending parent must be an agent')
    }
  })

  it('lists nothing for an agent that never started a background run', async () => {
    const fixture = await createBackgroundFixture()
    expect(fixture.host.root.subagentTool.pending(fixture.parent)).to.deep.equal([])
  })

  it('speaks the configured locale in the start text and the delivered message', async () => {
    const fixture = await createBackgroundFixture({ locale: 'zh-CN' })
    const gate = fixture.model.child('task')
    const text = await startInBackground(fixture, { prompt: 'task', label: 'scan' })
    const runId = /运行编号 ([0-9a-f-]+)；/.exec(text)?.[1]
    expect(runId).to.be.a('string')
    expect(text).to.equal(`子代理 "scan" 已在后台启动，运行编号 ${runId}；它完成后，结果会作为一条消息送达。`)
    fixture.model.parent({ text: 'noted' })
    gate.answer({ text: 'found two' })
    await delivered(fixture)
    expect(fixture.deliveries()).to.deep.equal([`后台子代理 "scan"（运行 ${runId}）已完成：\nfound two`])
  })
})
