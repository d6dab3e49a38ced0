import { expect } from 'chai'
import sinon from 'sinon'
import type { ToolResult } from '../../lib/types.ts'
import CodeMode from '../../plugins/code-mode/index.ts'
import { alreadyRecorded, MISSING_CAPTURE, notRecordedConcurrently } from '../../plugins/structured-output/index.ts'
import { call, createFixture, type Fixture } from './fixture.ts'

const blocked: ToolResult = { isError: true, content: [{ type: 'text', text: 'Error: blocked by policy' }], code: 'POLICY' }

/** A fixture with `CodeMode` loaded (its `run_code` binds every tool the calling agent sees). */
async function withCodeMode(): Promise<Fixture> {
  const fixture = await createFixture()
  await fixture.host.load(CodeMode, {})
  return fixture
}

const runCode = (code: string) => ({ toolCalls: [call('run_code', { code })] })

// the nested rule of SPEC §3 against the real sandbox; `commit.spec.ts` covers it without one
describe('StructuredOutput inside Code Mode (SPEC §1.5, §3)', () => {
  it('commits a capture made inside a successful run_code', async () => {
    const fixture = await withCodeMode()
    fixture.host.scripted.push(runCode('await tools.structured_output({ answer: 3 }); return "done"'))
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
    const result = await run.result
    expect(result.stopReason).to.equal('completed')
    expect(result.structured).to.deep.equal({ answer: 3 })
    expect(fixture.host.scripted.requests).to.have.length(1)
    await run.dispose()
  })

  it('discards a capture when the program throws after it', async () => {
    const fixture = await withCodeMode()
    fixture.host.scripted.push(
      runCode('await tools.structured_output({ answer: 3 }); throw new Error("after the capture")'),
      { text: 'done' },
    )
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
    const result = await run.result
    expect(result.stopReason).to.equal('error')
    expect(result.diagnostic).to.equal(MISSING_CAPTURE)
    expect(result).to.not.have.property('structured')
    expect(fixture.host.scripted.requests).to.have.length(2)
    await run.dispose()
  })

  it('discards a capture when a post-execute listener blocks run_code', async () => {
    const fixture = await withCodeMode()
    const off = fixture.host.root.on('tools/post-execute', (exec, _result, next) => (exec.name === 'run_code' ? blocked : next()))
    fixture.host.scripted.push(runCode('await tools.structured_output({ answer: 3 }); return "done"'), { text: 'done' })
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
    const result = await run.result
    off()
    expect(result.stopReason).to.equal('error')
    expect(result).to.not.have.property('structured')
    await run.dispose()
  })

  it('discards a capture when a pre-execute listener denies run_code', async () => {
    const fixture = await withCodeMode()
    const off = fixture.host.root.on('tools/pre-execute', (exec, next) =>
      exec.name === 'run_code' ? { kind: 'deny', reason: 'no code today' } : next(),
    )
    fixture.host.scripted.push(runCode('await tools.structured_output({ answer: 3 }); return "done"'), { text: 'done' })
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
    const result = await run.result
    off()
    expect(result.stopReason).to.equal('error')
    expect(result).to.not.have.property('structured')
    await run.dispose()
  })

  it('denies a binding called after the capture in the same program', async () => {
    const fixture = await withCodeMode()
    const body = sinon.spy(() => 'ok')
    fixture.host.root.tools.register({ name: 'other', description: 'another tool', parameters: { type: 'object' }, execute: body })
    const outcomes: ToolResult[] = []
    const off = fixture.host.root.on('tools/result', (exec, result) => {
      if (exec.name === 'run_code') outcomes.push(result)
    })
    fixture.host.scripted.push(
      runCode('await tools.structured_output({ answer: 3 }); try { await tools.other({}) } catch (error) { return error.message }'),
    )
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
    const result = await run.result
    off()
    expect(body.called).to.equal(false)
    expect(outcomes.map((outcome) => outcome.value)).to.deep.equal([alreadyRecorded('other')])
    expect(result.structured).to.deep.equal({ answer: 3 })
    await run.dispose()
  })

  it('commits an un-awaited capture that an async pre-execute listener holds back', async () => {
    const fixture = await withCodeMode()
    const { root } = fixture.host
    const order: string[] = []
    const offResult = root.on('tools/result', (exec, result) => {
      order.push(`${exec.name} ${result.isError ? 'error' : 'ok'}`)
    })
    // an async policy check somewhere in the host delays the capture past the program's return
    const offPolicy = root.on('tools/pre-execute', async (exec, next) => {
      if (exec.name === 'structured_output') await new Promise(setImmediate)
      return next()
    })
    fixture.host.scripted.push(runCode('tools.structured_output({ answer: 3 }); return "done"'))
    const run = await root.inprocessRun.spawn(fixture.request())
    const result = await run.result
    offResult()
    offPolicy()
    // run_code reports only after the call its program started has ended
    expect(order).to.deep.equal(['structured_output ok', 'run_code ok'])
    expect(result.stopReason).to.equal('completed')
    expect(result.structured).to.deep.equal({ answer: 3 })
    await run.dispose()
  })

  it('records one of two concurrent captures and tells the other it was not recorded', async () => {
    const fixture = await withCodeMode()
    const outcomes: ToolResult[] = []
    const off = fixture.host.root.on('tools/result', (exec, result) => {
      if (exec.name === 'run_code') outcomes.push(result)
    })
    fixture.host.scripted.push(
      runCode(
        'const all = await Promise.allSettled([tools.structured_output({ answer: 1 }), tools.structured_output({ answer: 2 })]);' +
          ' return all.map((each) => each.status === "fulfilled" ? "recorded" : each.reason.message)',
      ),
    )
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
    const result = await run.result
    off()
    expect(outcomes.map((outcome) => outcome.value)).to.deep.equal([['recorded', notRecordedConcurrently()]])
    expect(result.stopReason).to.equal('completed')
    expect(result.structured).to.deep.equal({ answer: 1 })
    await run.dispose()
  })

  it('records nothing from a Promise.all of two captures, so a later capture commits', async () => {
    const fixture = await withCodeMode()
    fixture.host.scripted.push(
      runCode('await Promise.all([tools.structured_output({ answer: 1 }), tools.structured_output({ answer: 2 })]); return "done"'),
      { toolCalls: [call('structured_output', { answer: 4 })] },
    )
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
    const result = await run.result
    expect(result.stopReason).to.equal('completed')
    expect(result.structured).to.deep.equal({ answer: 4 })
    expect(fixture.host.scripted.requests).to.have.length(2)
    await run.dispose()
  })

  it('shows the binding only to the structured child', async () => {
    const fixture = await withCodeMode()
    const result = await fixture.host.root.tools.execute({
      name: 'run_code',
      arguments: { code: 'return typeof tools.structured_output' },
      agent: fixture.parent,
    })
    expect(result.isError).to.equal(false)
    expect(result.value).to.equal('undefined')
  })
})
