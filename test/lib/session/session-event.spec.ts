import { expect } from 'chai'
import { isEvent, isKnownEvent } from '../../../lib/session/session-event.ts'
import type { SessionEvent } from '../../../lib/types.ts'

const turnEnd: SessionEvent = Object.freeze({ seq: 3, type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } })
const pluginEvent: SessionEvent = Object.freeze({ seq: 4, type: 'subagent/background-start', data: { runId: 'r1' } })

describe('session event guards', () => {
  it('narrows an event of the asked type and reads its typed data', () => {
    expect(isEvent(turnEnd, 'turn/end') ? turnEnd.data.reason.kind : undefined).to.equal('completed')
  })

  it('refuses an event of another type', () => {
    expect(isEvent(turnEnd, 'turn/start')).to.equal(false)
  })

  it('recognises each type the loop writes as known', () => {
    for (const type of ['turn/start', 'user/message', 'step/start', 'assistant/delta', 'assistant/message', 'tool/result', 'turn/end', 'session/end-seed']) {
      expect(isKnownEvent({ seq: 0, type, data: {} }), type).to.equal(true)
    }
  })

  it('treats a plugin event type as unknown', () => {
    expect(isKnownEvent(pluginEvent)).to.equal(false)
  })

  it('treats an inherited property name as unknown', () => {
    expect(isKnownEvent({ seq: 0, type: 'toString', data: {} })).to.equal(false)
  })

  it('lets a switch on a known event narrow its data', () => {
    const seen: string[] = []
    for (const event of [turnEnd, pluginEvent]) {
      if (!isKnownEvent(event)) continue
      switch (event.type) {
        case 'turn/end':
          seen.push(`end ${event.data.turn} ${event.data.reason.kind}`)
          break
        default:
          seen.push(event.type)
      }
    }
    expect(seen).to.deep.equal(['end 1 completed'])
  })
})
