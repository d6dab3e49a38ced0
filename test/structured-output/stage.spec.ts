import { expect } from 'chai'
import type { ToolExecution, ToolResult } from '../../lib/types.ts'
import { CaptureState } from '../../plugins/structured-output/stage.ts'

const ok: ToolResult = { isError: false, content: [] }
const failed: ToolResult = { isError: true, content: [{ type: 'text', text: 'Error: failed' }] }

function execution(name: string, parent?: ToolExecution): ToolExecution {
  return Object.freeze({
    token: Symbol(name),
    callId: name,
    name,
    args: {},
    ...(parent ? { parent: parent.token } : {}),
    signal: new AbortController().signal,
  })
}

describe('CaptureState (nested captures)', () => {
  it('commits a nested capture whose enclosing execution had already succeeded', () => {
    const state = new CaptureState()
    const program = execution('run_code')
    state.observe(program, ok)
    const capture = execution('structured_output', program)
    expect(state.decide(capture)).to.equal('stage')
    state.stage(capture, { answer: 1 })
    state.observe(capture, ok)
    expect(state.isCommitted).to.equal(true)
    expect(state.value).to.deep.equal({ answer: 1 })
  })

  it('refuses a nested capture whose enclosing execution had already failed, and stays unlocked', () => {
    const state = new CaptureState()
    const program = execution('run_code')
    state.observe(program, failed)
    expect(state.decide(execution('structured_output', program))).to.equal('failed')
    expect(state.isLocked).to.equal(false)
  })

  it('refuses a second capture while the first is in flight', () => {
    const state = new CaptureState()
    const program = execution('run_code')
    const first = execution('structured_output', program)
    state.stage(first, { answer: 1 })
    expect(state.decide(execution('structured_output', program))).to.equal('busy')
  })

  it('waits for the outermost open execution and discards the value when an outer one fails', () => {
    const state = new CaptureState()
    const outer = execution('outer')
    const inner = execution('run_code', outer)
    const capture = execution('structured_output', inner)
    state.stage(capture, { answer: 1 })
    state.observe(capture, ok)
    state.observe(inner, ok)
    expect(state.isLocked).to.equal(true)
    state.observe(outer, failed)
    expect(state.isLocked).to.equal(false)
    expect(state.isCommitted).to.equal(false)
  })
})
