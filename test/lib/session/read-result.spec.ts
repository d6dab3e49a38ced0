import { expect } from 'chai'
import { readResult } from '../../../lib/session/read-result.ts'
import { englishDiagnostic } from '../../../locales/index.ts'
import type { ContentBlock, SessionEvent, TurnEndReason, Usage } from '../../../lib/types.ts'

/** What the driver reads: diagnostics rendered in en-US, as `SubagentResult.diagnostic` carries them. */
function readInEnglish(events: readonly SessionEvent[], seedLength: number, cancelled: boolean) {
  return readResult(events, seedLength, cancelled, englishDiagnostic)
}

type Entry = [type: string, data: unknown]

function build(...entries: Entry[]): readonly SessionEvent[] {
  return Object.freeze(entries.map(([type, data], seq) => Object.freeze({ seq, type, data: Object.freeze(data) })))
}

const text = (value: string): ContentBlock => ({ type: 'text', text: value })
const turnStart = (turn: number): Entry => ['turn/start', { turn, trigger: 'message' }]
const user = (value: string): Entry => ['user/message', { content: [text(value)], source: { kind: 'user' } }]
const step = (turn: number, index = 0): Entry => ['step/start', { turn, step: index }]
const delta = (turn: number, value: string): Entry => ['assistant/delta', { turn, step: 0, text: value }]
const message = (turn: number, content: ContentBlock[], usage?: Usage): Entry => [
  'assistant/message',
  usage === undefined ? { turn, step: 0, content } : { turn, step: 0, content, usage },
]
const turnEnd = (turn: number, reason: TurnEndReason): Entry => ['turn/end', { turn, reason }]

const completed: TurnEndReason = { kind: 'completed' }
const failed = (message: string, code?: string): TurnEndReason =>
  code === undefined ? { kind: 'error', error: { message } } : { kind: 'error', error: { message, code } }

/** A turn that ran one step, answered `answer` and ended with `reason`. */
const worked = (turn: number, answer: string, reason: TurnEndReason = completed, usage?: Usage): Entry[] => [
  turnStart(turn),
  user(`ask ${turn}`),
  step(turn),
  delta(turn, answer),
  message(turn, [text(answer)], usage),
  turnEnd(turn, reason),
]

/** A turn that ended before any step started. */
const stepless = (turn: number, reason: TurnEndReason): Entry[] => [turnStart(turn), user(`ask ${turn}`), turnEnd(turn, reason)]

function utf8Length(value: string): number {
  return new TextEncoder().encode(value).length
}

describe('readResult', () => {
  describe('output', () => {
    it('returns the content of the last own message with content', () => {
      const events = build(...worked(0, 'first'), ...worked(1, 'second'))
      expect(readInEnglish(events, 0, false).output).to.deep.equal([text('second')])
    })

    it('skips a later usage-only message with empty content', () => {
      const events = build(turnStart(0), step(0), message(0, [text('answer')]), step(0, 1), message(0, [], { inputTokens: 1, outputTokens: 0 }))
      expect(readInEnglish(events, 0, false).output).to.deep.equal([text('answer')])
    })

    it('returns a copy of the message content', () => {
      const content = [text('answer')]
      const events = build(turnStart(0), step(0), message(0, content), turnEnd(0, completed))
      const { output } = readInEnglish(events, 0, false)
      expect(output).not.to.equal(events[2].data)
      expect(output).not.to.equal((events[2].data as { content: ContentBlock[] }).content)
      expect(output).to.deep.equal(content)
    })

    it('keeps every block of the message, tool calls included', () => {
      const call: ContentBlock = { type: 'tool-call', id: 'c1', name: 'lookup', arguments: '{}' }
      const events = build(turnStart(0), step(0), message(0, [{ type: 'reasoning', text: 'hm' }, call]))
      expect(readInEnglish(events, 0, false).output).to.deep.equal([{ type: 'reasoning', text: 'hm' }, call])
    })

    it('falls back to the streamed text as one text block when no message has content', () => {
      const events = build(turnStart(0), step(0), delta(0, 'par'), delta(0, 'tial'), message(0, []))
      expect(readInEnglish(events, 0, false).output).to.deep.equal([text('partial')])
    })

    it('returns an empty output when nothing was streamed', () => {
      const events = build(...stepless(0, { kind: 'blocked' }))
      expect(readInEnglish(events, 0, false).output).to.deep.equal([])
    })

    it('returns an empty output when the streamed text is empty', () => {
      const events = build(turnStart(0), step(0), delta(0, ''), message(0, []))
      expect(readInEnglish(events, 0, false).output).to.deep.equal([])
    })

    it('keeps the streamed text of an interrupted message', () => {
      const events = build(
        turnStart(0),
        step(0),
        delta(0, 'partial'),
        ['assistant/message', { turn: 0, step: 0, content: [text('partial')], interrupted: true }],
        turnEnd(0, { kind: 'aborted', cause: { kind: 'parent' } }),
      )
      expect(readInEnglish(events, 0, true).output).to.deep.equal([text('partial')])
    })

    it('reports no output from a seeded message after a fork', () => {
      const events = build(...worked(0, 'parent answer'), ...stepless(1, { kind: 'blocked' }))
      expect(readInEnglish(events, 6, false).output).to.deep.equal([])
    })

    it('leaves seeded streamed text out of the fallback', () => {
      const events = build(...worked(0, 'parent answer'), turnStart(1), step(1), delta(1, 'own'), message(1, []))
      expect(readInEnglish(events, 6, false).output).to.deep.equal([text('own')])
    })
  })

  describe('stop reason', () => {
    it('maps a completed turn to completed', () => {
      expect(readInEnglish(build(...worked(0, 'a')), 0, false).stopReason).to.equal('completed')
    })

    it('maps a max-tokens turn to max-tokens', () => {
      expect(readInEnglish(build(...worked(0, 'a', { kind: 'max-tokens' })), 0, false).stopReason).to.equal('max-tokens')
    })

    it('maps an aborted turn to aborted', () => {
      const events = build(...worked(0, 'a', { kind: 'aborted', cause: { kind: 'user' } }))
      expect(readInEnglish(events, 0, false).stopReason).to.equal('aborted')
    })

    it('maps a blocked turn to refusal', () => {
      expect(readInEnglish(build(...stepless(0, { kind: 'blocked' })), 0, false).stopReason).to.equal('refusal')
    })

    it('maps a failed turn to error', () => {
      expect(readInEnglish(build(...worked(0, 'a', failed('boom'))), 0, false).stopReason).to.equal('error')
    })

    it('maps an interrupted turn to error', () => {
      expect(readInEnglish(build(...worked(0, 'a', { kind: 'interrupted' })), 0, false).stopReason).to.equal('error')
    })

    it('maps an unknown end kind to error', () => {
      const events = build(...worked(0, 'a', { kind: 'vanished' } as unknown as TurnEndReason))
      expect(readInEnglish(events, 0, false).stopReason).to.equal('error')
    })

    it('reports error when the child never ran a turn', () => {
      expect(readInEnglish(build(), 0, false).stopReason).to.equal('error')
    })

    it('counts an aborted turn that ended before its first step', () => {
      const events = build(...worked(0, 'a'), ...stepless(1, { kind: 'aborted', cause: { kind: 'hook', reason: 'x' } }))
      expect(readInEnglish(events, 0, false).stopReason).to.equal('aborted')
    })

    it('counts a failed turn that ended before its first step', () => {
      const events = build(...worked(0, 'a'), ...stepless(1, failed('no model', 'NO_MODEL')))
      expect(readInEnglish(events, 0, false).stopReason).to.equal('error')
    })

    it('skips a later turn that completed without a step', () => {
      const events = build(...worked(0, 'a', { kind: 'max-tokens' }), ...stepless(1, completed))
      expect(readInEnglish(events, 0, false).stopReason).to.equal('max-tokens')
    })

    it('skips a later turn that was interrupted without a step', () => {
      const events = build(...worked(0, 'a'), ...stepless(1, { kind: 'interrupted' }))
      expect(readInEnglish(events, 0, false).stopReason).to.equal('completed')
    })

    it('uses the last of several working turns', () => {
      const events = build(...worked(0, 'a', failed('boom')), ...worked(1, 'b'))
      expect(readInEnglish(events, 0, false).stopReason).to.equal('completed')
    })

    it('ignores a seeded completed turn after a fork', () => {
      const events = build(...worked(0, 'parent answer'))
      expect(readInEnglish(events, 6, false).stopReason).to.equal('error')
    })

    it('does not count a seeded step/start towards an own turn', () => {
      const events = build(turnStart(0), step(0), turnEnd(0, completed))
      expect(readInEnglish(events, 2, false).stopReason).to.equal('error')
    })

    it('matches steps to turns by turn number', () => {
      const events = build(turnStart(4), step(4), turnStart(5), turnEnd(5, completed))
      expect(readInEnglish(events, 0, false).stopReason).to.equal('error')
    })
  })

  describe('cancellation', () => {
    it('keeps a completed turn completed when the run was cancelled', () => {
      expect(readInEnglish(build(...worked(0, 'a')), 0, true)).to.deep.equal({ output: [text('a')], stopReason: 'completed' })
    })

    it('turns a failed turn into aborted when the run was cancelled', () => {
      expect(readInEnglish(build(...worked(0, 'a', failed('boom'))), 0, true).stopReason).to.equal('aborted')
    })

    it('turns a max-tokens turn into aborted when the run was cancelled', () => {
      const events = build(...worked(0, 'a', { kind: 'max-tokens' }))
      expect(readInEnglish(events, 0, true).stopReason).to.equal('aborted')
    })

    it('turns a blocked turn into aborted when the run was cancelled', () => {
      expect(readInEnglish(build(...stepless(0, { kind: 'blocked' })), 0, true).stopReason).to.equal('aborted')
    })

    it('reports aborted when the run was cancelled before any turn ran', () => {
      expect(readInEnglish(build(), 0, true)).to.deep.equal({
        output: [],
        stopReason: 'aborted',
        diagnostic: 'the run was cancelled',
        diagnosticText: { key: 'cancelled', params: {} },
      })
    })
  })

  describe('diagnostic', () => {
    it('names the cancel cause of an aborted turn', () => {
      const events = build(...worked(0, 'a', { kind: 'aborted', cause: { kind: 'parent' } }))
      expect(readInEnglish(events, 0, true).diagnostic).to.equal('the run was cancelled (parent)')
    })

    it('names the cause of an abort even when the run itself was not cancelled', () => {
      const events = build(...worked(0, 'a', { kind: 'aborted', cause: { kind: 'disposed' } }))
      expect(readInEnglish(events, 0, false).diagnostic).to.equal('the run was cancelled (disposed)')
    })

    it('leaves a hook cause reason out of the sentence', () => {
      const events = build(...worked(0, 'a', { kind: 'aborted', cause: { kind: 'hook', reason: 'secret token' } }))
      expect(readInEnglish(events, 0, false).diagnostic).to.equal('the run was cancelled (hook)')
    })

    it('says the run was cancelled when the cause is unknown', () => {
      expect(readInEnglish(build(...worked(0, 'a', failed('boom'))), 0, true).diagnostic).to.equal('the run was cancelled')
    })

    it('quotes the error message of a failed turn', () => {
      const events = build(...worked(0, 'a', failed('upstream 503')))
      expect(readInEnglish(events, 0, false).diagnostic).to.equal('the child turn failed: upstream 503')
    })

    it('appends the error code of a failed turn', () => {
      const events = build(...worked(0, 'a', failed('step limit reached', 'MAX_STEPS')))
      expect(readInEnglish(events, 0, false).diagnostic).to.equal('the child turn failed: step limit reached (MAX_STEPS)')
    })

    it('carries nothing of the error but its message and code', () => {
      const error = { message: 'boom', code: 'MODEL_FAILED', stack: 'at secret.ts:1', args: { apiKey: 'sk-1' } }
      const events = build(...worked(0, 'a', { kind: 'error', error } as TurnEndReason))
      expect(readInEnglish(events, 0, false).diagnostic).to.equal('the child turn failed: boom (MODEL_FAILED)')
    })

    it('says the turn failed when the error message is empty', () => {
      const events = build(...worked(0, 'a', failed('')))
      expect(readInEnglish(events, 0, false).diagnostic).to.equal('the child turn failed')
    })

    it('explains an interrupted turn', () => {
      const events = build(...worked(0, 'a', { kind: 'interrupted' }))
      expect(readInEnglish(events, 0, false).diagnostic).to.equal('the child turn was interrupted')
    })

    it('explains an unknown end kind', () => {
      const events = build(...worked(0, 'a', { kind: 'vanished' } as unknown as TurnEndReason))
      expect(readInEnglish(events, 0, false).diagnostic).to.equal('the child turn ended for an unknown reason')
    })

    it('explains a token limit', () => {
      const events = build(...worked(0, 'a', { kind: 'max-tokens' }))
      expect(readInEnglish(events, 0, false).diagnostic).to.equal('the child hit its token limit')
    })

    it('explains a refusal', () => {
      const events = build(...stepless(0, { kind: 'blocked' }))
      expect(readInEnglish(events, 0, false).diagnostic).to.equal('a pre-step hook blocked the child turn')
    })

    it('explains a child that never ran a turn', () => {
      expect(readInEnglish(build(), 0, false).diagnostic).to.equal('the child never ran a turn')
    })

    it('puts no diagnostic key on a completed result', () => {
      expect(readInEnglish(build(...worked(0, 'a')), 0, false)).not.to.have.property('diagnostic')
    })

    it('cuts a long diagnostic to 4096 bytes ending with an ellipsis', () => {
      const events = build(...worked(0, 'a', failed('x'.repeat(10_000))))
      const { diagnostic } = readInEnglish(events, 0, false)
      expect(utf8Length(diagnostic!)).to.equal(4096)
      expect(diagnostic!.startsWith('the child turn failed: xxx')).to.equal(true)
      expect(diagnostic!.endsWith('xx…')).to.equal(true)
    })

    it('cuts a long diagnostic on a character boundary', () => {
      const events = build(...worked(0, 'a', failed('😀'.repeat(2_000))))
      const { diagnostic } = readInEnglish(events, 0, false)
      expect(utf8Length(diagnostic!)).to.be.at.most(4096)
      expect(diagnostic!.endsWith('😀…')).to.equal(true)
      expect(new TextDecoder().decode(new TextEncoder().encode(diagnostic!))).to.equal(diagnostic)
    })

    it('keeps a diagnostic of exactly 4096 bytes whole', () => {
      const message = 'y'.repeat(4096 - 'the child turn failed: '.length)
      const events = build(...worked(0, 'a', failed(message)))
      expect(readInEnglish(events, 0, false).diagnostic).to.equal(`the child turn failed: ${message}`)
    })

    it('carries the key and params of a failed turn beside the rendered text', () => {
      const events = build(...worked(0, 'a', failed('step limit reached', 'MAX_STEPS')))
      expect(readInEnglish(events, 0, false).diagnosticText).to.deep.equal({
        key: 'failedWithMessageAndCode',
        params: { message: 'step limit reached', code: 'MAX_STEPS' },
      })
    })

    it('redacts a bearer token in the params it carries, not only in the rendered text', () => {
      const events = build(...worked(0, 'a', failed('rejected Bearer abc.def-123')))
      expect(readInEnglish(events, 0, false).diagnosticText).to.deep.equal({
        key: 'failedWithMessage',
        params: { message: 'rejected Bearer ***' },
      })
    })

    it('bounds the message it carries to 4096 bytes, as the rendered text is', () => {
      const events = build(...worked(0, 'a', failed('x'.repeat(10_000))))
      const { diagnosticText } = readInEnglish(events, 0, false)
      expect(diagnosticText?.key).to.equal('failedWithMessage')
      const params = diagnosticText?.params as { message: string } | undefined
      expect(utf8Length(params?.message ?? '')).to.equal(4096)
    })

    it('renders the diagnostic with the renderer it is given', () => {
      const events = build(...worked(0, 'a', { kind: 'interrupted' }))
      expect(readResult(events, 0, false, (diagnostic) => `<${diagnostic.key}>`).diagnostic).to.equal('<interrupted>')
    })
  })

  describe('usage', () => {
    it('sums the usage of every own message', () => {
      const events = build(...worked(0, 'a', completed, { inputTokens: 10, outputTokens: 2 }), ...worked(1, 'b', completed, { inputTokens: 5, outputTokens: 3 }))
      expect(readInEnglish(events, 0, false).usage).to.deep.equal({ inputTokens: 15, outputTokens: 5 })
    })

    it('counts a usage-only message with empty content', () => {
      const events = build(turnStart(0), step(0), message(0, [], { inputTokens: 7, outputTokens: 0 }), turnEnd(0, { kind: 'max-tokens' }))
      expect(readInEnglish(events, 0, false).usage).to.deep.equal({ inputTokens: 7, outputTokens: 0 })
    })

    it('leaves seeded usage out after a fork', () => {
      const events = build(...worked(0, 'parent', completed, { inputTokens: 100, outputTokens: 100 }), ...worked(1, 'own', completed, { inputTokens: 1, outputTokens: 2 }))
      expect(readInEnglish(events, 6, false).usage).to.deep.equal({ inputTokens: 1, outputTokens: 2 })
    })

    it('puts no usage key on the result when no own message reported usage', () => {
      const events = build(...worked(0, 'parent', completed, { inputTokens: 100, outputTokens: 100 }), ...worked(1, 'own'))
      expect(readInEnglish(events, 6, false)).to.deep.equal({ output: [text('own')], stopReason: 'completed' })
    })
  })
})

describe('readResult: a turn stopped by the tree budget (SPEC §9)', () => {
  it('reports stop reason budget with the figures of the budget that stopped it', () => {
    const events = build(...stepless(1, { kind: 'budget', limit: 'tokens', used: 120, max: 100 }))
    expect(readInEnglish(events, 0, false)).to.deep.equal({
      output: [],
      stopReason: 'budget',
      diagnostic: 'the delegation tree exhausted its tokens budget (120 of 100)',
      diagnosticText: { key: 'budget', params: { limit: 'tokens', used: 120, max: 100 } },
    })
  })

  it('names only the limit when the turn end carries no figures', () => {
    const events = build(...worked(1, 'half', { kind: 'budget', limit: 'modelRequests' }))
    expect(readInEnglish(events, 0, false).diagnostic).to.equal('the delegation tree exhausted its modelRequests budget')
  })

  it('reports a budget stop of a cancelled run as aborted', () => {
    const events = build(...stepless(1, { kind: 'budget', limit: 'children', used: 1, max: 1 }))
    expect(readInEnglish(events, 0, true).stopReason).to.equal('aborted')
  })
})
