import { expect } from 'chai'
import sinon from 'sinon'
import type { ToolExecution, ToolResult } from '../../lib/types.ts'
import { alreadyRecorded, MISSING_CAPTURE } from '../../plugins/structured-output/index.ts'
import { call, createFixture, type Fixture } from './fixture.ts'

const blocked: ToolResult = { isError: true, content: [{ type: 'text', text: 'Error: blocked by policy' }], code: 'POLICY' }

interface NestedCall {
  name: string
  arguments: unknown
  callId?: string
}

/**
 * Gives every structured child a scoped tool `nest` that behaves like Code Mode's `run_code`: it
 * runs `calls` through `tools.execute` with `parent` = its own token (in order, or all at once with
 * `parallel`), then throws when `fail` is set, else returns whether each call failed.
 */
function installNest(fixture: Fixture): () => void {
  const { root } = fixture.host
  return root.on('subagent/setup', (child) => {
    child.ctx.tools.register({
      name: 'nest',
      description: 'runs nested tool calls',
      parameters: {
        type: 'object',
        properties: { calls: { type: 'array' }, fail: { type: 'boolean' }, parallel: { type: 'boolean' } },
        required: ['calls'],
      },
      async execute(args: { calls: NestedCall[]; fail?: boolean; parallel?: boolean }, exec: ToolExecution) {
        const run = (nested: NestedCall) =>
          root.tools.execute({
            name: nested.name,
            arguments: nested.arguments,
            agent: exec.agent,
            parent: exec.token,
            signal: exec.signal,
            ...(nested.callId !== undefined ? { callId: nested.callId } : {}),
          })
        const results: ToolResult[] = []
        if (args.parallel) results.push(...(await Promise.all(args.calls.map(run))))
        else for (const nested of args.calls) results.push(await run(nested))
        if (args.fail) throw new Error('program failed after the capture')
        return results.map((result) => result.isError)
      },
    })
  })
}

const capture = (answer: number): NestedCall => ({ name: 'structured_output', arguments: { answer } })

describe('StructuredOutput commit (SPEC §3)', () => {
  describe('tools/post-execute', () => {
    it('discards a capture that a listener turns into an error, and the turn goes on', async () => {
      const fixture = await createFixture()
      const off = fixture.host.root.on('tools/post-execute', (exec, _result, next) =>
        exec.name === 'structured_output' ? blocked : next(),
      )
      fixture.host.scripted.push({ toolCalls: [call('structured_output', { answer: 1 })] }, { text: 'done' })
      const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
      const result = await run.result
      off()
      expect(result.stopReason).to.equal('error')
      expect(result.diagnostic).to.equal(MISSING_CAPTURE)
      expect(result).to.not.have.property('structured')
      expect(fixture.host.scripted.requests).to.have.length(2)
      await run.dispose()
    })

    it('commits the staged arguments when a listener replaces the result with another success', async () => {
      const fixture = await createFixture()
      const off = fixture.host.root.on('tools/post-execute', (exec, _result, next) =>
        exec.name === 'structured_output' ? { isError: false, value: { answer: 99 }, content: [{ type: 'text', text: 'noted' }] } : next(),
      )
      fixture.host.scripted.push({ toolCalls: [call('structured_output', { answer: 1 })] })
      const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
      const result = await run.result
      off()
      expect(result.stopReason).to.equal('completed')
      expect(result.structured).to.deep.equal({ answer: 1 })
      expect(fixture.host.scripted.requests).to.have.length(1)
      await run.dispose()
    })

    it('never promotes a discarded stage through another execution reusing its call id', async () => {
      const fixture = await createFixture()
      const body = sinon.spy(() => 'ok')
      fixture.host.root.tools.register({ name: 'other', description: 'another tool', parameters: { type: 'object' }, execute: body })
      const off = fixture.host.root.on('tools/post-execute', (exec, _result, next) =>
        exec.name === 'structured_output' ? blocked : next(),
      )
      fixture.host.scripted.push(
        { toolCalls: [call('structured_output', { answer: 1 }, 'dup'), call('other', {}, 'dup')] },
        { text: 'done' },
      )
      const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
      const result = await run.result
      off()
      expect(body.calledOnce).to.equal(true)
      expect(result.stopReason).to.equal('error')
      expect(result).to.not.have.property('structured')
      await run.dispose()
    })
  })

  describe('nested in an enclosing execution (Code Mode)', () => {
    it('commits once the enclosing execution succeeds', async () => {
      const fixture = await createFixture()
      const off = installNest(fixture)
      fixture.host.scripted.push({ toolCalls: [call('nest', { calls: [capture(3)] })] })
      const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
      const result = await run.result
      off()
      expect(result.stopReason).to.equal('completed')
      expect(result.structured).to.deep.equal({ answer: 3 })
      expect(fixture.host.scripted.requests).to.have.length(1)
      await run.dispose()
    })

    it('denies later calls of the child while the nested commit is pending', async () => {
      const fixture = await createFixture()
      const off = installNest(fixture)
      const body = sinon.spy(() => 'ok')
      fixture.host.root.tools.register({ name: 'other', description: 'another tool', parameters: { type: 'object' }, execute: body })
      const denied: ToolResult[] = []
      const offResult = fixture.host.root.on('tools/result', (exec, result) => {
        if (exec.name === 'other') denied.push(result)
      })
      fixture.host.scripted.push({ toolCalls: [call('nest', { calls: [capture(3), { name: 'other', arguments: {} }] })] })
      const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
      const result = await run.result
      off()
      offResult()
      expect(body.called).to.equal(false)
      expect(denied).to.deep.equal([
        { isError: true, content: [{ type: 'text', text: `Error: ${alreadyRecorded('other')}` }], code: 'TOOL_DENIED' },
      ])
      expect(result.structured).to.deep.equal({ answer: 3 })
      await run.dispose()
    })

    it('discards the capture when the enclosing program throws after it', async () => {
      const fixture = await createFixture()
      const off = installNest(fixture)
      fixture.host.scripted.push({ toolCalls: [call('nest', { calls: [capture(3)], fail: true })] }, { text: 'done' })
      const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
      const result = await run.result
      off()
      expect(result.stopReason).to.equal('error')
      expect(result.diagnostic).to.equal(MISSING_CAPTURE)
      expect(result).to.not.have.property('structured')
      expect(fixture.host.scripted.requests).to.have.length(2)
      await run.dispose()
    })

    it('lifts the pending lock when the enclosing execution fails, so a later capture commits', async () => {
      const fixture = await createFixture()
      const off = installNest(fixture)
      fixture.host.scripted.push(
        { toolCalls: [call('nest', { calls: [capture(3)], fail: true })] },
        { toolCalls: [call('structured_output', { answer: 4 })] },
      )
      const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
      const result = await run.result
      off()
      expect(result.stopReason).to.equal('completed')
      expect(result.structured).to.deep.equal({ answer: 4 })
      await run.dispose()
    })

    const blockedCases = [
      {
        title: 'discards the capture when a post-execute listener blocks the enclosing execution',
        blocks: 'nest',
        calls: [call('nest', { calls: [capture(3)] })],
      },
      {
        title: 'discards a nested capture whose own result was blocked, though the enclosing execution succeeds',
        blocks: 'structured_output',
        calls: [call('nest', { calls: [capture(3)] })],
      },
      {
        title: 'never lets an enclosing execution with the same call id promote a blocked nested stage',
        blocks: 'structured_output',
        calls: [call('nest', { calls: [{ ...capture(3), callId: 'same' }] }, 'same')],
      },
    ]
    for (const { title, blocks, calls } of blockedCases) {
      it(title, async () => {
        const fixture = await createFixture()
        const off = installNest(fixture)
        const offBlock = fixture.host.root.on('tools/post-execute', (exec, _result, next) => (exec.name === blocks ? blocked : next()))
        fixture.host.scripted.push({ toolCalls: calls }, { text: 'done' })
        const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
        const result = await run.result
        off()
        offBlock()
        expect(result.stopReason).to.equal('error')
        expect(result).to.not.have.property('structured')
        await run.dispose()
      })
    }

    it('never promotes a live stage through a concurrent execution with the same call id', async () => {
      const fixture = await createFixture()
      const off = installNest(fixture)
      fixture.host.root.tools.register({ name: 'other', description: 'another tool', parameters: { type: 'object' }, execute: () => 'ok' })
      let otherReported!: () => void
      const reported = new Promise<void>((resolve) => (otherReported = resolve))
      const offResult = fixture.host.root.on('tools/result', (exec) => {
        if (exec.name === 'other') otherReported()
      })
      // the capture's outcome is decided only after `other` (same call id) reported success
      const offBlock = fixture.host.root.on('tools/post-execute', async (exec, _result, next) =>
        exec.name === 'structured_output' ? reported.then(() => blocked) : next(),
      )
      const calls = [
        { ...capture(3), callId: 'dup' },
        { name: 'other', arguments: {}, callId: 'dup' },
      ]
      fixture.host.scripted.push({ toolCalls: [call('nest', { calls, parallel: true })] }, { text: 'done' })
      const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
      const result = await run.result
      off()
      offResult()
      offBlock()
      expect(result.stopReason).to.equal('error')
      expect(result).to.not.have.property('structured')
      await run.dispose()
    })

    it('waits for the outermost enclosing execution', async () => {
      const fixture = await createFixture()
      const off = installNest(fixture)
      const inner = { name: 'nest', arguments: { calls: [capture(3)] } }
      fixture.host.scripted.push({ toolCalls: [call('nest', { calls: [inner], fail: true })] }, { text: 'done' })
      const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
      const result = await run.result
      off()
      expect(result.stopReason).to.equal('error')
      expect(result).to.not.have.property('structured')
      await run.dispose()
    })

    it('commits through two enclosing levels when both succeed', async () => {
      const fixture = await createFixture()
      const off = installNest(fixture)
      const inner = { name: 'nest', arguments: { calls: [capture(3)] } }
      fixture.host.scripted.push({ toolCalls: [call('nest', { calls: [inner] })] })
      const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
      const result = await run.result
      off()
      expect(result.structured).to.deep.equal({ answer: 3 })
      expect(fixture.host.scripted.requests).to.have.length(1)
      await run.dispose()
    })
  })
})
