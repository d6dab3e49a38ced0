/**
 * Invariant companion for integration tests: a global observer of the host's events that records
 * every broken rule as one sentence. Install it before taking the leak-check baseline (its
 * listeners count), run the scenario, then call `check()`.
 *
 * Rules: `seq` is contiguous and equals the index; one `turn/end` per `turn/start`; one
 * `tools/result` per execution (and one before every `tool/result` the loop writes); nothing is
 * appended or executed for an agent after its `agent/disposed`; a disposed agent is never published
 * again (a resume publishes a new agent under the stored id: that starts a new life of the id);
 * every `approval/decided` answers an `approval/requested` of the same session, once.
 */
import { expect } from 'chai'
import type { Context } from 'cordis'
import type { Agent, Session, SessionEvent, ToolExecution } from '../../lib/types.ts'

export interface Invariants {
  /** Every violation so far, one sentence each. */
  readonly violations: readonly string[]
  /** Fails (chai `AssertionError`) listing every violation, including turns left open. */
  check(): void
  /** Removes the observer's listeners. */
  dispose(): void
}

interface SessionState {
  session: Session
  lastSeq: number
  openTurn?: number
  /** Approval requests of the session not yet decided (made on the first one). */
  openRequests?: Set<string>
}

function openTurnOf(events: readonly SessionEvent[]): number | undefined {
  let open: number | undefined
  for (const event of events) {
    if (event.type === 'turn/start') open = (event.data as { turn: number }).turn
    else if (event.type === 'turn/end') open = undefined
  }
  return open
}

/** The approval requests of `events` without a decision among them (a resumed session may decide them). */
function openRequestsOf(events: readonly SessionEvent[]): Set<string> | undefined {
  let open: Set<string> | undefined
  for (const event of events) {
    if (event.type === 'approval/requested') (open ??= new Set()).add((event.data as { requestId: string }).requestId)
    else if (event.type === 'approval/decided') open?.delete((event.data as { requestId: string }).requestId)
  }
  return open
}

/** Installs the observer on the host's root context. */
export function installInvariants(root: Context): Invariants {
  const violations: string[] = []
  const sessions = new Map<string, SessionState>()
  const reported = new WeakSet<ToolExecution>()
  /** `tools/result` emissions of each agent not yet matched by a `tool/result` session event. */
  const pendingResults = new Map<string, string[]>()
  /** The agent object each disposed id last belonged to. */
  const disposed = new Map<string, Agent>()

  const stateOf = (session: Session, event: SessionEvent): SessionState => {
    let state = sessions.get(session.id)
    if (!state) {
      // a session may come with history appended before publication (seed, setup): start from it
      const before = session.events.slice(0, event.seq)
      before.forEach((earlier, index) => {
        if (earlier.seq !== index) violations.push(`session "${session.id}" has event ${index} with seq ${earlier.seq}`)
      })
      state = { session, lastSeq: event.seq - 1, openTurn: openTurnOf(before), openRequests: openRequestsOf(before) }
      sessions.set(session.id, state)
    }
    return state
  }

  const onEvent = (session: Session, event: SessionEvent): void => {
    if (disposed.has(session.id)) {
      violations.push(`session "${session.id}" appended "${event.type}" after its agent was disposed`)
    }
    const state = stateOf(session, event)
    if (session.events[event.seq] !== event) {
      violations.push(`session "${session.id}" emitted "${event.type}" with seq ${event.seq}, which is not its index`)
    }
    if (event.seq !== state.lastSeq + 1) {
      violations.push(`session "${session.id}" jumped from seq ${state.lastSeq} to seq ${event.seq}`)
    }
    state.lastSeq = event.seq
    if (event.type === 'turn/start') {
      const { turn } = event.data as { turn: number }
      if (state.openTurn !== undefined) {
        violations.push(`session "${session.id}" started turn ${turn} while turn ${state.openTurn} was still open`)
      }
      state.openTurn = turn
    } else if (event.type === 'turn/end') {
      const { turn } = event.data as { turn: number }
      if (state.openTurn !== turn) {
        violations.push(`session "${session.id}" ended turn ${turn}, which was not the open turn`)
      }
      state.openTurn = undefined
    } else if (event.type === 'approval/requested') {
      ;(state.openRequests ??= new Set()).add((event.data as { requestId: string }).requestId)
    } else if (event.type === 'approval/decided') {
      const { requestId } = event.data as { requestId: string }
      if (!state.openRequests?.delete(requestId)) {
        violations.push(`session "${session.id}" decided approval request "${requestId}", which it had not asked or had decided already`)
      }
    } else if (event.type === 'tool/result') {
      const { callId } = event.data as { callId: string }
      const pending = pendingResults.get(session.id)
      const index = pending ? pending.indexOf(callId) : -1
      if (index < 0) {
        violations.push(`session "${session.id}" recorded a tool/result for call "${callId}" that no tools/result reported`)
      } else {
        pending!.splice(index, 1)
      }
    }
  }

  const onResult = (exec: ToolExecution): void => {
    if (reported.has(exec)) {
      violations.push(`tool "${exec.name}" (call "${exec.callId}") reported tools/result more than once`)
    }
    reported.add(exec)
    const agentId = exec.agent?.id
    if (agentId === undefined) return
    if (disposed.has(agentId)) {
      violations.push(`tool "${exec.name}" ran for agent "${agentId}" after it was disposed`)
    }
    // only top-level calls become session events; nested (Code Mode) ones do not
    if (exec.parent === undefined) {
      let pending = pendingResults.get(agentId)
      if (!pending) pendingResults.set(agentId, (pending = []))
      pending.push(exec.callId)
    }
  }

  const onDisposed = (agent: Agent): void => {
    if (disposed.get(agent.id) === agent) violations.push(`agent "${agent.id}" emitted agent/disposed more than once`)
    disposed.set(agent.id, agent)
    const state = sessions.get(agent.id)
    const open = state ? state.openTurn : openTurnOf(agent.session.events)
    if (open !== undefined) violations.push(`agent "${agent.id}" was disposed while turn ${open} was still open`)
  }

  const onCreated = (agent: Agent): void => {
    const gone = disposed.get(agent.id)
    if (gone === undefined) return
    if (gone === agent) {
      violations.push(`agent "${agent.id}" was published again after agent/disposed`)
      return
    }
    // a resume: the stored session starts a new life, checked from its loaded history on
    disposed.delete(agent.id)
    sessions.delete(agent.id)
    pendingResults.delete(agent.id)
  }

  const disposers = [
    root.on('session/event', onEvent),
    root.on('tools/result', onResult),
    root.on('agent/disposed', onDisposed),
    root.on('agent/created', onCreated),
  ]

  return {
    violations,
    check() {
      const found = violations.slice()
      // the host may have been unloaded by the scenario
      const agents = root.agents as Context['agents'] | undefined
      for (const [id, state] of sessions) {
        const agent = agents?.get(id)
        if (agent && agent.status === 'idle' && state.openTurn !== undefined) {
          found.push(`agent "${id}" is idle but turn ${state.openTurn} never ended`)
        }
      }
      if (found.length) expect.fail(`host invariants broken:\n- ${found.join('\n- ')}`)
    },
    dispose() {
      for (const dispose of disposers) dispose()
    },
  }
}
