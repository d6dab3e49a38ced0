import { expect } from 'chai'
import { closingEvents, INTERRUPTED_TOOL_RESULT } from '../../../lib/session/open-turn.ts'
import type { SessionEvent } from '../../../lib/types.ts'

function log(...entries: [string, unknown][]): SessionEvent[] {
  return entries.map(([type, data], seq) => ({ seq, type, data }))
}

const start: [string, unknown] = ['turn/start', { turn: 2, trigger: 'message' }]
const user: [string, unknown] = ['user/message', { content: [{ type: 'text', text: 'go' }], source: { kind: 'user' } }]
const errorResult = (step: number, callId: string, name: string) => ({
  type: 'tool/result',
  data: { turn: 2, step, callId, name, isError: true, content: [{ type: 'text', text: INTERRUPTED_TOOL_RESULT }] },
})
const interrupted = { type: 'turn/end', data: { turn: 2, reason: { kind: 'interrupted' } } }

describe('closingEvents (closing a turn a stopped process left open, SPEC §14)', () => {
  it('closes nothing when the last turn ended, or when there is no turn', () => {
    expect(closingEvents([])).to.deep.equal([])
    expect(closingEvents(log(start, user, ['turn/end', { turn: 2, reason: { kind: 'completed' } }]))).to.deep.equal([])
  })

  it('ends a turn that never reached its first step', () => {
    expect(closingEvents(log(start, user))).to.deep.equal([interrupted])
  })

  it('gives every call of the turn without a result the interrupted error, in model order, across steps', () => {
    const events = log(
      start,
      user,
      ['step/start', { turn: 2, step: 1 }],
      ['assistant/message', { turn: 2, step: 1, content: [{ type: 'tool-call', id: 'a', name: 'read', arguments: '{}' }] }],
      ['tool/result', { turn: 2, step: 1, callId: 'a', name: 'read', isError: false, content: [] }],
      ['step/start', { turn: 2, step: 2 }],
      [
        'assistant/message',
        {
          turn: 2,
          step: 2,
          content: [
            { type: 'tool-call', id: 'b', name: 'write', arguments: '{}' },
            { type: 'tool-call', id: 'c', name: 'deploy', arguments: '{}' },
          ],
        },
      ],
      ['tool/result', { turn: 2, step: 2, callId: 'b', name: 'write', isError: false, content: [] }],
    )
    expect(closingEvents(events)).to.deep.equal([errorResult(2, 'c', 'deploy'), interrupted])
  })

  it('decides each undecided approval request before the results, leaving decided ones alone', () => {
    const events = log(
      start,
      ['step/start', { turn: 2, step: 1 }],
      [
        'assistant/message',
        {
          turn: 2,
          step: 1,
          content: [
            { type: 'tool-call', id: 'a', name: 'rm', arguments: '{}' },
            { type: 'tool-call', id: 'b', name: 'rm', arguments: '{}' },
          ],
        },
      ],
      ['approval/requested', { turn: 2, step: 1, callId: 'a', name: 'rm', arguments: '{}', requestId: 'r1' }],
      ['approval/requested', { turn: 2, step: 1, callId: 'b', name: 'rm', arguments: '{}', requestId: 'r2' }],
      ['approval/decided', { requestId: 'r1', approved: true, by: 'user' }],
    )
    expect(closingEvents(events)).to.deep.equal([
      { type: 'approval/decided', data: { requestId: 'r2', approved: false, reason: 'interrupted', by: 'resume' } },
      errorResult(1, 'a', 'rm'),
      errorResult(1, 'b', 'rm'),
      interrupted,
    ])
  })

  it("writes the streamed text of a step cut off before its message as an interrupted message, without usage", () => {
    const events = log(
      start,
      ['step/start', { turn: 2, step: 1 }],
      ['assistant/delta', { turn: 2, step: 1, text: 'Hal' }],
      ['assistant/delta', { turn: 2, step: 1, text: 'f done' }],
    )
    expect(closingEvents(events)).to.deep.equal([
      { type: 'assistant/message', data: { turn: 2, step: 1, content: [{ type: 'text', text: 'Half done' }], interrupted: true } },
      interrupted,
    ])
    // a request sent with nothing streamed yet leaves an empty interrupted message
    expect(closingEvents(log(start, ['step/start', { turn: 2, step: 1 }]))[0]).to.deep.equal({
      type: 'assistant/message',
      data: { turn: 2, step: 1, content: [], interrupted: true },
    })
  })

  it("looks only at the agent's own events: a seed's open turn is not the agent's", () => {
    const seed = log(start, user)
    expect(closingEvents(seed, 2)).to.deep.equal([])
  })

  it('passes over approval events of an unexpected shape', () => {
    const events = log(start, ['approval/requested', null], ['approval/requested', { requestId: 7 }])
    expect(closingEvents(events)).to.deep.equal([interrupted])
  })
})
