/**
 * Closing a turn a stopped process left open (SPEC §14): the events a whole-tree resume appends to
 * a session whose last turn has no `turn/end`, so the log reads as a turn that ended
 * `interrupted`, every tool call has its result and no approval request stays undecided. Plain
 * code: no cordis, no I/O.
 */
import { isEvent } from './session-event.ts'
import type { ContentBlock, SessionEvent } from '../types.ts'

/** The error result every tool call of an open turn without a `tool/result` gets. */
export const INTERRUPTED_TOOL_RESULT = 'Error: interrupted before the tool returned'

/** The approval request event (SPEC §11.2) and its decision, as the resume reads and writes them. */
export const APPROVAL_REQUESTED_EVENT = 'approval/requested'
export const APPROVAL_DECIDED_EVENT = 'approval/decided'

/** One event to append: its type and data. */
export interface ClosingEvent {
  type: string
  data: unknown
}

interface OpenCall {
  step: number
  callId: string
  name: string
}

/**
 * The events that close the session's last own turn (from `seedLength` on) when it has no
 * `turn/end`, in the order to append them; `[]` when there is no open turn. In order:
 * - the last step's `assistant/message` when the stream stopped before it: the streamed text,
 *   marked `interrupted: true` (as an abort mid-stream leaves it), without usage;
 * - `approval/decided {requestId, approved: false, reason: 'interrupted', by: 'resume'}` for each
 *   `approval/requested` without a decision — so a call that was waiting never runs;
 * - a `tool/result` with `isError: true` and the text `Error: interrupted before the tool returned`
 *   for each tool call of the turn without one, in model order;
 * - `turn/end {turn, reason: {kind: 'interrupted'}}`.
 * Never throws: an event whose data has an unexpected shape is passed over.
 */
export function closingEvents(events: readonly SessionEvent[], seedLength = 0): ClosingEvent[] {
  let start = -1
  for (let i = events.length - 1; i >= seedLength; i--) {
    const type = events[i]!.type
    if (type === 'turn/end') return []
    if (type === 'turn/start') {
      start = i
      break
    }
  }
  if (start < 0) return []
  const first = events[start]!
  const turn = isEvent(first, 'turn/start') && typeof first.data?.turn === 'number' ? first.data.turn : 0
  const calls: OpenCall[] = []
  const results = new Set<string>()
  const requests: string[] = []
  const decided = new Set<string>()
  let step: number | undefined
  let answered = true
  let streamed = ''
  for (let i = start + 1; i < events.length; i++) {
    const event = events[i]!
    if (isEvent(event, 'step/start')) {
      step = event.data.step
      answered = false
      streamed = ''
    } else if (isEvent(event, 'assistant/delta')) {
      if (typeof event.data.text === 'string') streamed += event.data.text
    } else if (isEvent(event, 'assistant/message')) {
      answered = true
      for (const block of event.data.content) {
        if (block.type === 'tool-call') calls.push({ step: event.data.step, callId: block.id, name: block.name })
      }
    } else if (isEvent(event, 'tool/result')) {
      results.add(event.data.callId)
    } else if (event.type === APPROVAL_REQUESTED_EVENT) {
      const requestId = stringField(event.data, 'requestId')
      if (requestId !== undefined) requests.push(requestId)
    } else if (event.type === APPROVAL_DECIDED_EVENT) {
      const requestId = stringField(event.data, 'requestId')
      if (requestId !== undefined) decided.add(requestId)
    }
  }
  const closing: ClosingEvent[] = []
  if (!answered && step !== undefined) {
    const content: ContentBlock[] = streamed ? [{ type: 'text', text: streamed }] : []
    closing.push({ type: 'assistant/message', data: { turn, step, content, interrupted: true } })
  }
  for (const requestId of requests) {
    if (decided.has(requestId)) continue
    decided.add(requestId)
    closing.push({ type: APPROVAL_DECIDED_EVENT, data: { requestId, approved: false, reason: 'interrupted', by: 'resume' } })
  }
  for (const call of calls) {
    if (results.has(call.callId)) continue
    results.add(call.callId)
    closing.push({
      type: 'tool/result',
      data: { turn, step: call.step, callId: call.callId, name: call.name, isError: true, content: [{ type: 'text', text: INTERRUPTED_TOOL_RESULT }] },
    })
  }
  closing.push({ type: 'turn/end', data: { turn, reason: { kind: 'interrupted' } } })
  return closing
}

function stringField(data: unknown, key: string): string | undefined {
  if (typeof data !== 'object' || data === null) return undefined
  const value = (data as Record<string, unknown>)[key]
  return typeof value === 'string' ? value : undefined
}
