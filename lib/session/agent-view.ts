/**
 * What the inspector shows for one agent, folded from its session header and events. Pure: the
 * caller passes the clock (`now`), so saved sessions and live ones go through the same code.
 * Every view has every key from the start (an absent value is `undefined`, which JSON omits):
 * views keep one shape however they change, so the code that folds them stays monomorphic.
 */
import { isEvent } from './session-event.ts'
import type { SessionEvent, SessionHeader, Usage } from '../types.ts'

export interface AgentView {
  id: string
  parentId?: string
  label?: string
  callId?: string
  /** The agent definition it was started from (header `agent`, SPEC §12). */
  agent?: string
  mode: 'root' | 'spawn' | 'fork'
  depth: number
  status: 'idle' | 'running'
  /** The last turn's end (`completed`, `aborted`, …), or the run's stop reason once it settled. */
  stopReason?: string
  usage: Usage
  /** Epoch ms: the header's `createdAt`. */
  startedAt: number
  /** Epoch ms of the last turn end seen live; undefined for a running agent and for saved files. */
  endedAt?: number
}

/** A fresh view of a session that has no events yet. */
export function viewOfHeader(header: SessionHeader): AgentView {
  return {
    id: header.id,
    parentId: header.parentSession,
    label: header.label,
    callId: header.callId,
    agent: header.agent,
    mode: header.origin !== 'subagent' ? 'root' : header.seedLength !== undefined ? 'fork' : 'spawn',
    depth: header.delegationDepth ?? 0,
    status: 'idle',
    stopReason: undefined,
    usage: { inputTokens: 0, outputTokens: 0 },
    startedAt: header.createdAt,
    endedAt: undefined,
  }
}

/**
 * Folds one event into `view` (in place). `now` is when it happened, when known. Events before
 * `seedLength` (a fork's copy of its parent's history) are the parent's and are skipped.
 */
export function applyEvent(view: AgentView, event: SessionEvent, seedLength: number, now?: number): void {
  if (event.seq < seedLength) return
  if (event.type === 'turn/start') {
    view.status = 'running'
    view.endedAt = undefined
  } else if (isEvent(event, 'turn/end')) {
    view.status = 'idle'
    // saved files are read as they are: a malformed line may lack data or reason
    view.stopReason = event.data?.reason?.kind
    if (now !== undefined) view.endedAt = now
  } else if (isEvent(event, 'assistant/message')) {
    const usage = event.data?.usage
    if (usage && Number.isFinite(usage.inputTokens) && Number.isFinite(usage.outputTokens)) {
      view.usage.inputTokens += usage.inputTokens
      view.usage.outputTokens += usage.outputTokens
    }
  }
}
