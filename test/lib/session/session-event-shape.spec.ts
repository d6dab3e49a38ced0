import { expect } from 'chai'
import { cancelCauseProblem, eventDataProblem } from '../../../lib/session/session-event-shape.ts'

const text = [{ type: 'text', text: 'hi' }]

const valid: [string, unknown][] = [
  ['turn/start', { turn: 1, trigger: 'message' }],
  ['user/message', { content: text, source: { kind: 'plugin' } }],
  ['step/start', { turn: 1, step: 2 }],
  ['assistant/delta', { turn: 1, step: 1, text: 'h' }],
  ['assistant/message', { turn: 1, step: 1, content: [] }],
  ['assistant/message', { turn: 1, step: 1, content: text, usage: { inputTokens: 0, outputTokens: 2 }, interrupted: true }],
  ['tool/result', { turn: 1, step: 1, callId: 'c', name: 'echo', isError: false, content: [{ type: 'tool-call', id: 'i', name: 'n', arguments: '{}' }] }],
  ['turn/end', { turn: 1, reason: { kind: 'completed' } }],
  ['turn/end', { turn: 1, reason: { kind: 'aborted', cause: { kind: 'hook', reason: 'x' } } }],
  ['turn/end', { turn: 1, reason: { kind: 'error', error: { message: 'boom', code: 'MAX_STEPS' } } }],
  ['turn/end', { turn: 1, reason: { kind: 'budget', limit: 'tokens', used: 3, max: 3 } }],
  ['turn/end', { turn: 1, reason: { kind: 'budget', limit: 'children' } }],
  ['turn/end', { turn: 1, reason: { kind: 'custom' } }],
  ['user/message', { content: [], source: { kind: 'scheduler' } }],
  ['session/end-seed', {}],
]

const invalid: [string, unknown, string][] = [
  ['turn/start', null, 'data must be an object, got null'],
  ['turn/start', { turn: '1', trigger: 'message' }, 'data.turn must be a number, got string'],
  ['turn/start', { turn: 1, trigger: 'timer' }, 'data.trigger must be "message", got "timer"'],
  ['user/message', { content: 'hi', source: { kind: 'user' } }, 'data.content must be an array, got string'],
  ['user/message', { content: [{ type: 'image' }], source: { kind: 'user' } }, 'data.content[0] has unknown type "image"'],
  ['user/message', { content: text }, 'data.source must be an object, got undefined'],
  ['user/message', { content: text, source: { kind: 3 } }, 'data.source.kind must be a string, got number'],
  ['step/start', { turn: 1 }, 'data.step must be a number, got undefined'],
  ['assistant/delta', { turn: 1, step: 1, text: 5 }, 'data.text must be a string, got number'],
  ['assistant/message', { turn: 1, step: 1 }, 'data.content must be an array, got undefined'],
  ['assistant/message', [], 'data must be an object, got array'],
  ['assistant/message', { turn: 1, step: 1, content: [], usage: 3 }, 'data.usage must be an object, got number'],
  ['assistant/message', { turn: 1, step: 1, content: [], usage: { inputTokens: '3', outputTokens: 1 } }, 'data.usage.inputTokens must be a non-negative number, got "3"'],
  ['assistant/message', { turn: 1, step: 1, content: [], usage: { inputTokens: 3, outputTokens: -1 } }, 'data.usage.outputTokens must be a non-negative number, got number'],
  ['assistant/message', { turn: 1, step: 1, content: [], interrupted: false }, 'data.interrupted must be true when present, got boolean'],
  ['tool/result', { turn: 1, step: 1, name: 'echo', isError: false, content: [] }, 'data.callId must be a string, got undefined'],
  ['tool/result', { turn: 1, step: 1, callId: 'c', name: 'echo', isError: false, content: [{ type: 'tool-call', id: 'i', name: 'n' }] }, 'data.content[0] arguments must be a string, got undefined'],
  ['turn/end', { turn: 1 }, 'data.reason must be an object, got undefined'],
  ['turn/end', { turn: 1, reason: { kind: 'aborted' } }, 'data.reason.cause must be an object, got undefined'],
  ['turn/end', { turn: 1, reason: { kind: 'aborted', cause: { kind: 1 } } }, 'data.reason.cause kind must be a string, got number'],
  ['turn/end', { turn: 1, reason: { kind: 'error', error: 'boom' } }, 'data.reason.error must be an object, got string'],
  ['turn/end', { turn: 1, reason: { kind: 'error', error: { message: 'boom', code: 3 } } }, 'data.reason.error.code must be a string, got number'],
  ['turn/end', { turn: 1, reason: { kind: 'budget', limit: 'time' } }, 'data.reason.limit must be "tokens", "modelRequests" or "children", got "time"'],
  ['turn/end', { turn: 1, reason: { kind: 'budget', limit: 'tokens', used: '1', max: 2 } }, 'data.reason.used must be a number, got string'],
  ['session/end-seed', 'end', 'data must be an object, got string'],
]

describe('eventDataProblem: the data shapes of the loop’s event types (SPEC §1.4)', () => {
  for (const [type, data] of valid) {
    it(`accepts ${type} data ${JSON.stringify(data)}`, () => {
      expect(eventDataProblem(type, data)).to.equal(undefined)
    })
  }

  for (const [type, data, problem] of invalid) {
    it(`names the bad field of ${type} data ${JSON.stringify(data)}`, () => {
      expect(eventDataProblem(type, data)).to.equal(problem)
    })
  }

  it('quotes at most 40 characters of a wrong string value', () => {
    expect(eventDataProblem('turn/start', { turn: 1, trigger: 'x'.repeat(100) })).to.equal(`data.trigger must be "message", got "${'x'.repeat(40)}"…`)
  })

  it('accepts any data of a type the loop does not write', () => {
    expect(eventDataProblem('plugin/note', null)).to.equal(undefined)
    expect(eventDataProblem('assistant/messages', { content: 1 })).to.equal(undefined)
  })
})

describe('cancelCauseProblem', () => {
  it('accepts a cause with a kind of its own', () => {
    expect(cancelCauseProblem({ kind: 'plugin-stop', detail: 1 })).to.equal(undefined)
  })

  it('names a cause that is not an object', () => {
    expect(cancelCauseProblem('user')).to.equal('must be an object, got string')
  })
})
