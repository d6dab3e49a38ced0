import { expect } from 'chai'
import type { AnySessionEvent, Session, SessionEvent, SessionHeader } from '../../lib/types.ts'
import { LiveTree } from '../../plugins/inspector/live-tree.ts'

/** A session as the tree reads it: header and a growing event list. */
function session(id: string, header: Partial<SessionHeader> = {}): Session & { events: SessionEvent[] } {
  const events: SessionEvent[] = []
  return {
    id,
    header: { id, createdAt: 1, ...header },
    events,
    append(type, data) {
      const event: AnySessionEvent = { seq: events.length, type, data }
      events.push(event)
      return event as SessionEvent<typeof type>
    },
  }
}

const turn = (s: Session, kind: string, usage = { inputTokens: 4, outputTokens: 1 }) => {
  s.append('turn/start', { turn: 1, trigger: 'message' })
  s.append('assistant/message', { turn: 1, step: 1, content: [], usage })
  s.append('turn/end', { turn: 1, reason: { kind } } as never)
}

describe('LiveTree', () => {
  let now: number
  let published: Set<Session>
  let tree: LiveTree

  beforeEach(() => {
    now = 100
    published = new Set()
    tree = new LiveTree(() => [...published], () => now)
  })

  const track = (s: Session) => {
    published.add(s)
    tree.track(s)
    return s
  }

  it('shows an agent with every event appended before the read folded in, its turn end stamped at the read', () => {
    const kid = track(session('kid', { parentSession: 'root', origin: 'subagent', delegationDepth: 1, label: 'review' }))
    turn(kid, 'completed')
    now = 130
    expect(tree.agents()).to.deep.equal([
      {
        id: 'kid',
        parentId: 'root',
        label: 'review',
        callId: undefined,
        agent: undefined,
        mode: 'spawn',
        depth: 1,
        status: 'idle',
        stopReason: 'completed',
        usage: { inputTokens: 4, outputTokens: 1 },
        startedAt: 1,
        endedAt: 130,
      },
    ])
  })

  it('shows the agent definition a child was started from', () => {
    track(session('kid', { parentSession: 'root', origin: 'subagent', delegationDepth: 1, agent: 'reviewer' }))
    expect(tree.agents()[0]).to.include({ id: 'kid', agent: 'reviewer' })
  })

  it('reports an agent changed twice between two reads once, as it is at the second read', () => {
    const kid = track(session('kid'))
    expect(tree.changed().map((view) => [view.id, view.status])).to.deep.equal([['kid', 'idle']])
    kid.append('turn/start', { turn: 1, trigger: 'message' })
    kid.append('turn/end', { turn: 1, reason: { kind: 'completed' } })
    const changed = tree.changed()
    expect(changed.map((view) => [view.id, view.status, view.stopReason])).to.deep.equal([['kid', 'idle', 'completed']])
    expect(tree.changed()).to.deep.equal([])
  })

  it("shows a settled run's stop reason over its last turn's, ended at the settle time", () => {
    const kid = track(session('kid'))
    turn(kid, 'completed')
    now = 110
    tree.settle('kid', 'error')
    now = 150
    const [view] = tree.changed()
    expect([view?.stopReason, view?.endedAt]).to.deep.equal(['error', 110])
  })

  it('shows a running agent as running with no end time after an earlier turn ended', () => {
    const kid = track(session('kid'))
    turn(kid, 'completed')
    tree.sync()
    kid.append('turn/start', { turn: 2, trigger: 'message' })
    const [view] = tree.changed()
    expect([view?.status, view?.endedAt]).to.deep.equal(['running', undefined])
  })

  it("keeps a disposed agent's view and transcript and stops reading its events", () => {
    const kid = track(session('kid'))
    turn(kid, 'completed')
    published.delete(kid)
    tree.sync()
    tree.changed()
    kid.append('turn/start', { turn: 2, trigger: 'message' })
    expect(tree.changed()).to.deep.equal([])
    expect(tree.agents().map((view) => [view.id, view.status])).to.deep.equal([['kid', 'idle']])
    expect(tree.events('kid')).to.have.length(4)
  })

  it("shows an agent resumed after its disposal from its new session, the old session's events left out", () => {
    const first = track(session('kid'))
    turn(first, 'completed')
    published.delete(first)
    // resumed in the same window the old session was disposed in: both are folded in one read
    const resumed = track(session('kid'))
    turn(resumed, 'aborted')
    resumed.append('turn/start', { turn: 2, trigger: 'message' })
    first.append('turn/start', { turn: 2, trigger: 'message' })
    expect(tree.agents().map((view) => [view.id, view.status, view.stopReason, view.usage.inputTokens])).to.deep.equal([
      ['kid', 'running', 'aborted', 4],
    ])
    expect(tree.events('kid')).to.equal(resumed.events)
  })

  it('shows a session tracked twice once', () => {
    const root = track(session('root'))
    tree.track(root)
    expect(tree.agents().map((view) => view.id)).to.deep.equal(['root'])
  })

  it("gives the transcript of an agent created since the last read, and undefined for an unknown one", () => {
    const kid = track(session('kid'))
    kid.append('turn/start', { turn: 1, trigger: 'message' })
    expect(tree.events('kid')?.map((event) => event.type)).to.deep.equal(['turn/start'])
    expect(tree.events('nobody')).to.equal(undefined)
  })

  it("leaves a fork's copy of its parent's history out of its usage", () => {
    const fork = session('fork', { parentSession: 'root', origin: 'subagent', seedLength: 3 })
    turn(fork, 'completed', { inputTokens: 50, outputTokens: 50 })
    track(fork)
    turn(fork, 'completed')
    expect(tree.agents().map((view) => [view.mode, view.usage])).to.deep.equal([['fork', { inputTokens: 4, outputTokens: 1 }]])
  })
})
