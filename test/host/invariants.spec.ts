import { expect } from 'chai'
import { Context } from 'cordis'
import type { Agent, Session, SessionEvent, ToolExecution, ToolResult } from '../../lib/types.ts'
import { Host } from '../../plugins/host/index.ts'
import { installInvariants } from '../support/invariants.ts'
import '../support/unhandled.ts'

/** A stand-in session whose events the test emits by hand, as a broken host would. */
function fakeSession(id: string, types: string[]): { session: Session; events: SessionEvent[] } {
  const events = types.map((type, seq) => Object.freeze({ seq, type, data: type.startsWith('turn/') ? { turn: 1 } : {} }))
  const session = { id, header: { id, createdAt: 0 }, events, append: () => expect.fail('not appendable') } as unknown as Session
  return { session, events }
}

function failureOf(check: () => void): string {
  try {
    check()
  } catch (error) {
    return (error as Error).message
  }
  return expect.fail('expected the invariant check to fail')
}

async function host(): Promise<Context> {
  const root = new Context()
  await root.plugin(Host, { maxSteps: 8 })
  return root
}

describe('test/support/invariants.ts', () => {
  it('passes a well-behaved sequence', async () => {
    const root = await host()
    const invariants = installInvariants(root)
    const { session, events } = fakeSession('s', ['turn/start', 'user/message', 'turn/end'])
    for (const event of events) root.emit('session/event', session, event)
    invariants.check()
    invariants.dispose()
  })

  it('names an approval decision that answers no open request of the session', async () => {
    const root = await host()
    const invariants = installInvariants(root)
    const events = [
      Object.freeze({ seq: 0, type: 'approval/requested', data: { requestId: 'r1' } }),
      Object.freeze({ seq: 1, type: 'approval/decided', data: { requestId: 'r1' } }),
      Object.freeze({ seq: 2, type: 'approval/decided', data: { requestId: 'r1' } }),
    ]
    const session = { id: 's', header: { id: 's', createdAt: 0 }, events, append: () => expect.fail('not appendable') } as unknown as Session
    for (const event of events) root.emit('session/event', session, event)
    expect(failureOf(() => invariants.check())).to.contain('session "s" decided approval request "r1", which it had not asked or had decided already')
    invariants.dispose()
  })

  it('names a session whose seq jumps', async () => {
    const root = await host()
    const invariants = installInvariants(root)
    const { session, events } = fakeSession('s', ['note', 'note', 'note'])
    root.emit('session/event', session, events[0])
    root.emit('session/event', session, events[2])
    expect(failureOf(() => invariants.check())).to.contain('session "s" jumped from seq 0 to seq 2')
    invariants.dispose()
  })

  it('names a turn/end that has no turn/start', async () => {
    const root = await host()
    const invariants = installInvariants(root)
    const { session, events } = fakeSession('s', ['turn/end'])
    root.emit('session/event', session, events[0])
    expect(failureOf(() => invariants.check())).to.contain('session "s" ended turn 1, which was not the open turn')
    invariants.dispose()
  })

  it('names an execution reported twice', async () => {
    const root = await host()
    const invariants = installInvariants(root)
    const exec = { token: Symbol('x'), callId: 'c1', name: 'x', args: {}, signal: new AbortController().signal } as ToolExecution
    const result: ToolResult = { isError: false, content: [] }
    root.emit('tools/result', exec, result)
    root.emit('tools/result', exec, result)
    expect(failureOf(() => invariants.check())).to.contain('tool "x" (call "c1") reported tools/result more than once')
    invariants.dispose()
  })

  it('names a tool/result session event that no tools/result reported', async () => {
    const root = await host()
    const invariants = installInvariants(root)
    const { session, events } = fakeSession('s', ['tool/result'])
    const event = Object.freeze({ ...events[0], data: { callId: 'c9' } })
    root.emit('session/event', session, event)
    expect(failureOf(() => invariants.check())).to.contain(
      'session "s" recorded a tool/result for call "c9" that no tools/result reported',
    )
    invariants.dispose()
  })

  it('names an append after agent/disposed', async () => {
    const root = await host()
    const invariants = installInvariants(root)
    const { session, events } = fakeSession('s', ['note'])
    root.emit('agent/disposed', { id: 's', session: { ...session, events: [] } } as unknown as Agent)
    root.emit('session/event', session, events[0])
    expect(failureOf(() => invariants.check())).to.contain('session "s" appended "note" after its agent was disposed')
    invariants.dispose()
  })

  it('names an idle agent whose turn never ended', async () => {
    const root = await host()
    const invariants = installInvariants(root)
    const handle = await root.agents.create({ sessionId: 'idle' })
    handle.agent.session.append('turn/start', { turn: 1, trigger: 'message' })
    expect(failureOf(() => invariants.check())).to.contain('agent "idle" is idle but turn 1 never ended')
    invariants.dispose()
    await handle.dispose()
  })

  it('names an agent published again after its agent/disposed', async () => {
    const root = await host()
    const invariants = installInvariants(root)
    const { session } = fakeSession('s', [])
    const agent = { id: 's', session } as unknown as Agent
    root.emit('agent/created', agent)
    root.emit('agent/disposed', agent)
    root.emit('agent/created', agent)
    expect(failureOf(() => invariants.check())).to.contain('agent "s" was published again after agent/disposed')
    invariants.dispose()
  })

  it('accepts a resumed agent under the id of a disposed one, checking its new appends', async () => {
    const root = await host()
    const invariants = installInvariants(root)
    const { session, events } = fakeSession('s', ['note', 'note'])
    root.emit('session/event', session, events[0])
    root.emit('agent/disposed', { id: 's', session } as unknown as Agent)
    const resumed = { id: 's', session } as unknown as Agent
    root.emit('agent/created', resumed)
    root.emit('session/event', session, events[1])
    invariants.check()
    root.emit('agent/disposed', resumed)
    root.emit('session/event', session, events[1])
    expect(failureOf(() => invariants.check())).to.contain('session "s" appended "note" after its agent was disposed')
    invariants.dispose()
  })
})
