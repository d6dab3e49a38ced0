import { expect } from 'chai'
import { BACKGROUND_DELIVERED_EVENT } from '../../lib/delegation/background-record.ts'
import type { Agent, ModelRequest } from '../../lib/types.ts'
import type { ScriptEntry } from '../../plugins/scripted-model/index.ts'
import SubagentTool from '../../plugins/subagent-tool/index.ts'
import type { FilesHost } from '../session-files/fixture.ts'
import { crashCopy, durableHost, tick } from './fixture.ts'

/** Script entries that answer `parent` in order and make every other agent's request hang. */
function routed(parent: () => Agent, ...answers: ScriptEntry[]): ScriptEntry[] {
  return answers.map((answer) => (request: ModelRequest) => (request.agent === parent() ? (answer as never) : 'hang'))
}

/** A parent whose background child "digger" is mid-stream, and a copy of the folder as a crash now leaves it. */
async function crashedWithBackgroundChild(): Promise<{ first: FilesHost; dir: string; parent: Agent; childId: string }> {
  const first = await durableHost(undefined, [SubagentTool])
  const parent = await first.agent()
  first.scripted.push(
    ...routed(
      () => parent,
      { toolCalls: [{ id: 'call_1', name: 'subagent', arguments: { prompt: 'dig', label: 'digger', background: true } }] },
      'hang',
      { text: 'started it' },
    ),
  )
  parent.followup('start a digger')
  await parent.whenIdle()
  const [pending] = first.root.subagentTool.pending(parent)
  const child = first.root.agents.get(pending!.runId)!
  while (!child.session.events.some((event) => event.type === 'assistant/delta')) await tick()
  const dir = await crashCopy(first)
  return { first, dir, parent, childId: child.id }
}

describe('resumeTree with SubagentTool: background runs the crash cut short (SPEC §14)', () => {
  it('delivers an unfinished background child to its parent once, as a failed run with the pinned diagnostic, then disposes it', async () => {
    const { dir, parent, childId } = await crashedWithBackgroundChild()
    const second = await durableHost(dir, [SubagentTool])
    second.scripted.push({ text: 'noted' })
    const tree = await second.root.inprocessRun.resumeTree(parent.id)
    expect(tree.agents.map((agent) => agent.id)).to.deep.equal([childId])
    await second.root.subagentTool.settled(tree.root)
    await tree.root.whenIdle()
    const messages = tree.root.session.events.filter((event) => event.type === 'user/message').map((event) => event.data)
    expect(messages.at(-1)).to.deep.equal({
      content: [
        {
          type: 'text',
          text: `Background subagent "digger" (run ${childId}) finished:\nError: subagent run failed\nDiagnostic: the process stopped before the run finished\nPartial output before the run ended:\npartial`,
        },
      ],
      source: { kind: 'plugin' },
    })
    expect(tree.root.session.events.filter((event) => event.type === BACKGROUND_DELIVERED_EVENT).map((event) => event.data)).to.deep.equal([{ runId: childId }])
    // delivered, so disposed: it leaves the process, and a later resume of the tree
    expect(second.root.agents.list()).to.deep.equal([tree.root])
    const later = await crashCopy(second)
    const third = await durableHost(later, [SubagentTool])
    const again = await third.root.inprocessRun.resumeTree(parent.id)
    expect(again.agents).to.deep.equal([])
    expect(third.root.subagentTool.pending(again.root)).to.deep.equal([])
    await again.dispose()
    await tree.dispose()
  })

  it('delivers a background child that had finished, its delivery lost to the crash, with its own result', async () => {
    const first = await durableHost(undefined, [SubagentTool])
    const parent = await first.agent()
    const parentAnswers: ScriptEntry[] = [
      { toolCalls: [{ id: 'call_1', name: 'subagent', arguments: { prompt: 'dig', label: 'digger', background: true } }] },
      // the parent is still busy when its child finishes: the delivery waits for it to be idle
      'hang',
    ]
    const route = (request: ModelRequest) => (request.agent === parent ? (parentAnswers.shift() as never) : { text: 'found it' })
    first.scripted.push(route, route, route)
    parent.followup('start a digger')
    const [pending] = await (async () => {
      while (!first.root.subagentTool.pending(parent).length) await tick()
      return first.root.subagentTool.pending(parent)
    })()
    const child = first.root.agents.get(pending!.runId)!
    while (child.status !== 'idle' || !parent.session.events.some((event) => event.type === 'assistant/delta')) await tick()
    const dir = await crashCopy(first)
    parent.cancel({ kind: 'user' })

    const second = await durableHost(dir, [SubagentTool])
    second.scripted.push({ text: 'thanks' })
    const tree = await second.root.inprocessRun.resumeTree(parent.id)
    await second.root.subagentTool.settled(tree.root)
    await tree.root.whenIdle()
    const delivered = tree.root.session.events.filter((event) => event.type === 'user/message').at(-1)!.data
    expect(delivered).to.deep.equal({
      content: [{ type: 'text', text: `Background subagent "digger" (run ${child.id}) finished:\nfound it` }],
      source: { kind: 'plugin' },
    })
    await tree.dispose()
  })
})
