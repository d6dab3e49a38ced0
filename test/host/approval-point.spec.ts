import { expect } from 'chai'
import type { ApprovalSubject, ApprovalVerdict, PreExecuteDecision, ToolExecution, ToolResult } from '../../lib/types.ts'
import { scene } from '../support/scene.ts'

const objectSchema = { type: 'object' }

function tool(name: string, extra: { readOnly?: boolean; execute?: () => unknown } = {}) {
  return { name, description: `The ${name} tool.`, parameters: objectSchema, execute: extra.execute ?? (() => `${name} ran`), ...(extra.readOnly === undefined ? {} : { readOnly: extra.readOnly }) }
}

function textOf(result: ToolResult): string {
  return result.content.map((block) => (block.type === 'text' ? block.text : '')).join('')
}

describe('ToolDefinition.readOnly (SPEC §11.1)', () => {
  it('rejects a definition whose readOnly is not a boolean, naming the field', async () => {
    const s = await scene()
    expect(() => s.root.tools.register({ ...tool('reader'), readOnly: 'yes' as unknown as boolean })).to.throw(
      TypeError,
      'tool "reader" readOnly must be a boolean',
    )
    expect(s.root.tools.get('reader')).to.equal(undefined)
  })

  it('is not part of the schema the model sees', async () => {
    const s = await scene()
    s.root.tools.register(tool('reader', { readOnly: true }))
    expect(s.root.tools.get('reader')).to.deep.equal({ name: 'reader', description: 'The reader tool.', parameters: objectSchema })
  })
})

describe('the approval point tools/approve (SPEC §11.2)', () => {
  it('tells the listener whether the tool is read-only, defaulting to false', async () => {
    const s = await scene()
    s.root.tools.register(tool('reader', { readOnly: true }))
    s.root.tools.register(tool('writer'))
    const seen: [string, boolean][] = []
    s.on('tools/approve', (exec: ToolExecution, subject: ApprovalSubject, next: () => Promise<ApprovalVerdict>) => {
      seen.push([exec.name, subject.readOnly])
      return next()
    })
    await s.root.tools.execute({ name: 'reader', arguments: {} })
    await s.root.tools.execute({ name: 'writer', arguments: {} })
    expect(seen).to.deep.equal([
      ['reader', true],
      ['writer', false],
    ])
  })

  it('runs after the pre-execute waterfall, the guards and the argument check, before the body', async () => {
    const s = await scene()
    const order: string[] = []
    s.root.tools.register(tool('probe', { execute: () => void order.push('body') }))
    s.on('tools/pre-execute', (_exec: ToolExecution, next: () => Promise<PreExecuteDecision>) => {
      order.push('pre-execute')
      return next()
    })
    s.root.tools.guard(() => void order.push('guard'))
    s.on('tools/approve', (_exec: ToolExecution, _subject: ApprovalSubject, next: () => Promise<ApprovalVerdict>) => {
      order.push('approve')
      return next()
    })
    await s.root.tools.execute({ name: 'probe', arguments: {} })
    expect(order).to.deep.equal(['pre-execute', 'guard', 'approve', 'body'])
  })

  it('never asks about a call the pre-execute waterfall, a guard or the argument check refused', async () => {
    const s = await scene()
    let asked = 0
    s.root.tools.register(tool('denied'))
    s.root.tools.register(tool('guarded'))
    s.root.tools.register({ ...tool('typed'), parameters: { type: 'object', required: ['x'] } })
    s.on('tools/pre-execute', (exec: ToolExecution, next: () => Promise<PreExecuteDecision>) =>
      exec.name === 'denied' ? { kind: 'deny', reason: 'no' } : next(),
    )
    s.root.tools.guard((exec) => (exec.name === 'guarded' ? 'guarded' : undefined))
    s.on('tools/approve', (_exec: ToolExecution, _subject: ApprovalSubject, next: () => Promise<ApprovalVerdict>) => {
      asked++
      return next()
    })
    for (const name of ['denied', 'guarded', 'typed']) expect((await s.root.tools.execute({ name, arguments: {} })).isError).to.equal(true)
    expect(asked).to.equal(0)
  })

  it('turns a deny into the error result with its reason and code, without running the body', async () => {
    const s = await scene()
    s.root.tools.register(tool('shell', { execute: () => expect.fail('body ran') }))
    const reported: ToolResult[] = []
    s.on('tools/approve', () => ({ kind: 'deny', reason: 'tool call "shell" was denied: denied by policy', code: 'DENIED' }))
    s.on('tools/result', (_exec: ToolExecution, result: ToolResult) => void reported.push(result))
    const result = await s.root.tools.execute({ name: 'shell', arguments: {} })
    expect(result).to.deep.equal({
      isError: true,
      content: [{ type: 'text', text: 'Error: tool call "shell" was denied: denied by policy' }],
      code: 'DENIED',
    })
    expect(reported).to.deep.equal([result])
  })

  it('codes a deny without a code TOOL_DENIED', async () => {
    const s = await scene()
    s.root.tools.register(tool('shell'))
    s.on('tools/approve', () => ({ kind: 'deny', reason: 'not now' }))
    const result = await s.root.tools.execute({ name: 'shell', arguments: {} })
    expect(result.code).to.equal('TOOL_DENIED')
    expect(textOf(result)).to.equal('Error: not now')
  })

  it('lets the call wait for a listener that answers later', async () => {
    const s = await scene()
    s.root.tools.register(tool('slow'))
    let answer!: (verdict: ApprovalVerdict) => void
    s.on('tools/approve', () => new Promise<ApprovalVerdict>((resolve) => (answer = resolve)))
    let settled = false
    const result = s.root.tools.execute({ name: 'slow', arguments: {} }).then((value) => {
      settled = true
      return value
    })
    await new Promise((resolve) => setImmediate(resolve))
    expect(settled).to.equal(false)
    answer({ kind: 'allow' })
    expect(textOf(await result)).to.equal('slow ran')
  })

  it('fails closed: a throwing listener refuses the call with HOOK_FAILED', async () => {
    const s = await scene()
    s.root.tools.register(tool('shell', { execute: () => expect.fail('body ran') }))
    s.on('tools/approve', () => {
      throw new Error('approver crashed')
    })
    const result = await s.root.tools.execute({ name: 'shell', arguments: {} })
    expect(result.code).to.equal('HOOK_FAILED')
    expect(textOf(result)).to.equal('Error: tools/approve listener failed: approver crashed')
  })

  it('reaches a listener registered through an agent context for that agent calls only', async () => {
    const s = await scene()
    s.root.tools.register(tool('shell'))
    const { agent } = await s.create()
    const { agent: other } = await s.create()
    agent.ctx.on('tools/approve', () => ({ kind: 'deny', reason: 'not for this agent' }))
    expect(textOf(await s.root.tools.execute({ name: 'shell', arguments: {}, agent }))).to.equal('Error: not for this agent')
    expect(textOf(await s.root.tools.execute({ name: 'shell', arguments: {}, agent: other }))).to.equal('shell ran')
  })
})
