import { expect } from 'chai'
import sinon from 'sinon'
import type { ToolExecution } from '../../lib/types.ts'
import { lastOf, scene } from '../support/scene.ts'

/** A tool whose body keeps its execution and returns `done` without reading the signal. */
function keepingTool(kept: ToolExecution[], gate?: Promise<void>) {
  return {
    name: 'keep',
    description: 'Keeps its execution.',
    parameters: { type: 'object' },
    execute: async (_args: never, exec: ToolExecution) => {
      kept.push(exec)
      await gate
      return 'done'
    },
  }
}

/**
 * One turn whose model calls `keep` once, then answers `ok`: resolves with the executions kept.
 * `beforeTurn` runs after the setup, right before the prompt is sent.
 */
async function keptCallTurn(beforeTurn?: () => void) {
  const s = await scene()
  const kept: ToolExecution[] = []
  s.root.tools.register(keepingTool(kept))
  const { agent } = await s.create()
  s.scripted.push({ toolCalls: [{ id: 'c1', name: 'keep', arguments: '{}' }] }, { text: 'ok' })
  beforeTurn?.()
  agent.followup('hello')
  await agent.whenIdle()
  return { agent, kept }
}

describe('agent loop: the signal a tool call gets (SPEC §1.5, §8.1)', () => {
  afterEach(() => sinon.restore())

  it('makes no AbortController for a turn whose tool never reads its signal', async () => {
    let controllers!: sinon.SinonSpy
    const { agent, kept } = await keptCallTurn(() => {
      controllers = sinon.spy(globalThis, 'AbortController')
    })
    expect(kept).to.have.length(1)
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'completed' } })
    expect(controllers.callCount).to.equal(0)
  })

  it('keeps signal among the execution’s own enumerable keys, in the same place', async () => {
    const { kept } = await keptCallTurn()
    expect(Object.keys(kept[0])).to.deep.equal(['token', 'callId', 'name', 'args', 'agent', 'parent', 'signal'])
    expect(Object.isFrozen(kept[0])).to.equal(true)
  })

  it('copies the turn’s signal into a spread of the execution, as the data property it reads as', async () => {
    const { kept } = await keptCallTurn()
    const copy = { ...kept[0] }
    expect(copy.signal).to.be.instanceOf(AbortSignal)
    expect(copy.signal).to.equal(kept[0].signal)
    expect(Object.getOwnPropertyDescriptor(copy, 'signal')?.value).to.equal(kept[0].signal)
  })

  it('hands a call that reads its signal only after the cancel an aborted signal with the turn’s reason', async () => {
    const s = await scene()
    const kept: ToolExecution[] = []
    let open!: () => void
    const gate = new Promise<void>((resolve) => (open = resolve))
    let entered!: () => void
    const inside = new Promise<void>((resolve) => (entered = resolve))
    s.root.tools.register({
      ...keepingTool(kept, gate),
      execute: async (_args: never, exec: ToolExecution) => {
        kept.push(exec)
        entered()
        await gate
        return 'done'
      },
    })
    const { agent } = await s.create()
    s.scripted.push({ toolCalls: [{ id: 'c1', name: 'keep', arguments: '{}' }] })
    agent.followup('hello')
    await inside
    agent.cancel({ kind: 'user' })
    open()
    await agent.whenIdle()
    const { signal } = kept[0]
    expect(signal.aborted).to.equal(true)
    expect((signal.reason as Error).message).to.equal('turn cancelled (user)')
    expect(kept[0].signal).to.equal(signal)
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'aborted', cause: { kind: 'user' } } })
  })
})
