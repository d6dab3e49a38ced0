import { expect } from 'chai'
import type { SubagentResult } from '../../lib/types.ts'
import {
  CANCELLED_HEADING,
  DECLINED_HEADING,
  FAILED_HEADING,
  incompleteHeadings,
  outputText,
  TOKEN_LIMIT_HEADING,
  toToolResult,
} from '../../plugins/subagent-tool/index.ts'

describe('toToolResult', () => {
  it('pins the four headings of SPEC §6 and the budget heading of §9', () => {
    expect(incompleteHeadings).to.deep.equal({
      aborted: 'subagent run was cancelled',
      error: 'subagent run failed',
      'max-tokens': 'subagent run hit its token limit before finishing',
      refusal: 'subagent declined the task',
      budget: "subagent run stopped because the delegation tree's budget ran out",
    })
    expect([CANCELLED_HEADING, FAILED_HEADING, TOKEN_LIMIT_HEADING, DECLINED_HEADING]).to.deep.equal([
      'subagent run was cancelled',
      'subagent run failed',
      'subagent run hit its token limit before finishing',
      'subagent declined the task',
    ])
  })

  it('heads a budget outcome with its own heading, code and the diagnostic', () => {
    const result: SubagentResult = {
      output: [],
      stopReason: 'budget',
      diagnostic: 'the delegation tree exhausted its tokens budget (120 of 100)',
      diagnosticText: { key: 'budget', params: { limit: 'tokens', used: 120, max: 100 } },
    }
    expect(toToolResult(result)).to.deep.equal({
      isError: true,
      code: 'SUBAGENT_BUDGET',
      content: [
        {
          type: 'text',
          text: "Error: subagent run stopped because the delegation tree's budget ran out\nDiagnostic: the delegation tree exhausted its tokens budget (120 of 100)",
        },
      ],
    })
  })

  it('shows a budget diagnostic to the model in zh-CN', () => {
    const result: SubagentResult = { output: [], stopReason: 'budget', diagnostic: 'the delegation tree exhausted its tokens budget (120 of 100)', diagnosticText: { key: 'budget', params: { limit: 'tokens', used: 120, max: 100 } } }
    expect(toToolResult(result, 'zh-CN').content).to.deep.equal([
      { type: 'text', text: 'Error: 委派树的预算已用完，子代理运行被停止\n诊断：委派树的 tokens 预算已用完（120/100）' },
    ])
  })

  it('returns the text of a completed output', () => {
    const result: SubagentResult = { output: [{ type: 'text', text: 'all good' }], stopReason: 'completed' }
    expect(toToolResult(result)).to.deep.equal({ isError: false, content: [{ type: 'text', text: 'all good' }] })
  })

  it('returns an empty text for a completed run without text output', () => {
    expect(toToolResult({ output: [], stopReason: 'completed' })).to.deep.equal({
      isError: false,
      content: [{ type: 'text', text: '' }],
    })
  })

  it('returns a structured value as JSON text and as the value', () => {
    const result: SubagentResult = {
      output: [{ type: 'text', text: 'ignored' }],
      structured: { answer: [1, 2] },
      stopReason: 'completed',
    }
    expect(toToolResult(result)).to.deep.equal({
      isError: false,
      content: [{ type: 'text', text: '{"answer":[1,2]}' }],
      value: { answer: [1, 2] },
    })
  })

  it('returns a structured null as the JSON text null', () => {
    const result = toToolResult({ output: [], structured: null, stopReason: 'completed' })
    expect(result.content).to.deep.equal([{ type: 'text', text: 'null' }])
  })

  it('renders a non-completed result as the heading alone when it has no details', () => {
    expect(toToolResult({ output: [], stopReason: 'error' })).to.deep.equal({
      isError: true,
      content: [{ type: 'text', text: 'Error: subagent run failed' }],
      code: 'SUBAGENT_FAILED',
    })
  })

  it('appends the diagnostic, then the partial output', () => {
    const result = toToolResult({
      output: [{ type: 'text', text: 'line one\nline two' }],
      stopReason: 'aborted',
      diagnostic: 'the run was cancelled (user)',
    })
    expect(result.content).to.deep.equal([
      {
        type: 'text',
        text: 'Error: subagent run was cancelled\nDiagnostic: the run was cancelled (user)\nPartial output before the run ended:\nline one\nline two',
      },
    ])
  })

  it('appends partial output without a diagnostic', () => {
    const result = toToolResult({ output: [{ type: 'text', text: 'so far' }], stopReason: 'refusal' })
    expect(result.content).to.deep.equal([
      { type: 'text', text: 'Error: subagent declined the task\nPartial output before the run ended:\nso far' },
    ])
    expect(result.code).to.equal('SUBAGENT_DECLINED')
  })

  it('leaves out partial output that has no text', () => {
    const result = toToolResult({
      output: [{ type: 'tool-call', id: 'c1', name: 'search', arguments: '{}' }],
      stopReason: 'max-tokens',
      diagnostic: 'the child hit its token limit',
    })
    expect(result.content).to.deep.equal([
      { type: 'text', text: 'Error: subagent run hit its token limit before finishing\nDiagnostic: the child hit its token limit' },
    ])
    expect(result.code).to.equal('SUBAGENT_MAX_TOKENS')
  })

  it('reports a non-completed result as an error even when a structured value is set', () => {
    const result = toToolResult({ output: [], structured: { answer: 1 }, stopReason: 'aborted', diagnostic: 'the run was cancelled' })
    expect(result.isError).to.equal(true)
    expect(result).to.not.have.property('value')
  })
})

describe('outputText', () => {
  it('joins text blocks with a newline and skips reasoning and tool calls', () => {
    expect(
      outputText([
        { type: 'reasoning', text: 'hmm' },
        { type: 'text', text: 'first' },
        { type: 'tool-call', id: 'c1', name: 'search', arguments: '{}' },
        { type: 'text', text: 'second' },
      ]),
    ).to.equal('first\nsecond')
  })
})
