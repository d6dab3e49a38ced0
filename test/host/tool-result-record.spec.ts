import { expect } from 'chai'
import type { ToolExecution, ToolResult } from '../../lib/types.ts'
import { lastOf, runTurn, scene } from '../support/scene.ts'

const echo = {
  name: 'echo',
  description: 'Echoes its text.',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  execute: (args: { text: string }) => `echo: ${args.text}`,
}


describe('agent loop: the tool/result a post-execute listener hands back (SPEC §1.2, §1.5)', () => {
  it('records a body result a post-execute listener changed in place as checked copies, leaving out a NaN it added', async () => {
    const s = await scene()
    s.root.tools.register(echo)
    s.on('tools/post-execute', async (_exec: ToolExecution, _body: ToolResult, next: () => Promise<ToolResult>) => {
      const result = await next()
      result.content.push({ type: 'text', text: 'noted', score: Number.NaN } as never)
      return result
    })
    const { agent } = await s.create()
    s.scripted.push({ toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 'a' } }] }, { text: 'done' })
    await runTurn(agent)
    expect(lastOf(agent, 'tool/result')).to.deep.equal({
      turn: 1,
      step: 1,
      callId: 'c1',
      name: 'echo',
      isError: false,
      content: [
        { type: 'text', text: 'echo: a' },
        { type: 'text', text: 'noted' },
      ],
    })
  })

  it('keeps a recorded tool/result as it was when the post-execute listener later changes a nested object it added', async () => {
    const s = await scene()
    s.root.tools.register(echo)
    const added = { type: 'text', text: 'noted', meta: { level: 1 } }
    s.on('tools/post-execute', async (_exec: ToolExecution, _body: ToolResult, next: () => Promise<ToolResult>) => {
      const result = await next()
      result.content.push(added as never)
      return result
    })
    const { agent } = await s.create()
    s.scripted.push({ toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 'a' } }] }, { text: 'done' })
    await runTurn(agent)
    const recorded = JSON.stringify(lastOf(agent, 'tool/result'))
    added.meta.level = 2
    expect(JSON.stringify(lastOf(agent, 'tool/result'))).to.equal(recorded)
  })
})

describe('agent loop: the tool/result a tools/result observer is handed (SPEC §1.5 observe-only)', () => {
  it('hands observers the final result frozen, so the session records it as the checks left it', async () => {
    const s = await scene()
    s.root.tools.register(echo)
    const attempts: string[] = []
    s.on('tools/result', (_exec: ToolExecution, result: ToolResult) => {
      try {
        result.content.push({ type: 'text', text: 'added', score: Number.NaN } as never)
        attempts.push('changed')
      } catch (error) {
        attempts.push((error as Error).name)
      }
    })
    const { agent } = await s.create()
    s.scripted.push({ toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 'a' } }] }, { text: 'done' })
    await runTurn(agent)
    expect(attempts).to.deep.equal(['TypeError'])
    expect(lastOf(agent, 'tool/result')).to.deep.equal({
      turn: 1,
      step: 1,
      callId: 'c1',
      name: 'echo',
      isError: false,
      content: [{ type: 'text', text: 'echo: a' }],
    })
  })
})

describe('agent loop: the tool/result of a body whose result reads differently each time (SPEC §1.2)', () => {
  it("records an error result naming isError when the isError getter of a body's result answers a boolean to the check and a function afterwards", async () => {
    const s = await scene()
    let reads = 0
    s.root.tools.register({
      ...echo,
      name: 'shifty',
      execute: () => ({
        get isError() {
          reads++
          return reads === 1 ? false : () => false
        },
        content: [{ type: 'text', text: 'shifty ran' }],
      }),
    })
    const { agent } = await s.create()
    s.scripted.push({ toolCalls: [{ id: 'c1', name: 'shifty', arguments: { text: 'a' } }] }, { text: 'done' })
    await runTurn(agent)
    expect(lastOf(agent, 'tool/result')).to.deep.equal({
      turn: 1,
      step: 1,
      callId: 'c1',
      name: 'shifty',
      isError: true,
      content: [{ type: 'text', text: 'Error: tool result isError must be a boolean' }],
    })
  })
})

describe('agent loop: a call that answers at once (no tick between body and record)', () => {
  it('records the tool/result of a body that returns at once before a microtask the body queued runs', async () => {
    const s = await scene()
    let recordedFirst: boolean | undefined
    const { agent } = await s.create()
    s.root.tools.register({
      ...echo,
      execute: (args: { text: string }) => {
        queueMicrotask(() => (recordedFirst = agent.session.events.some((event) => event.type === 'tool/result')))
        return `echo: ${args.text}`
      },
    })
    s.scripted.push({ toolCalls: [{ id: 'c1', name: 'echo', arguments: { text: 'a' } }] }, { text: 'done' })
    await runTurn(agent)
    expect(recordedFirst).to.equal(true)
  })

  it('keeps nested calls through tools.execute in flight together: both bodies run before either reports', async () => {
    const s = await scene()
    const order: string[] = []
    s.root.tools.register({
      ...echo,
      execute: (args: { text: string }) => {
        order.push(`body ${args.text}`)
        return `echo: ${args.text}`
      },
    })
    s.on('tools/result', (exec: ToolExecution) => order.push(`result ${(exec.args as { text: string }).text}`))
    const { agent } = await s.create()
    const execute = (text: string) => s.root.tools.execute({ name: 'echo', arguments: { text }, agent })
    await Promise.all([execute('a'), execute('b')])
    expect(order).to.deep.equal(['body a', 'body b', 'result a', 'result b'])
  })
})
