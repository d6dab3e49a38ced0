import { expect } from 'chai'
import type { Agent, ToolExecution, ToolResult } from '../../lib/types.ts'
import { lastOf, scene } from '../support/scene.ts'

const echo = {
  name: 'echo',
  description: 'Echoes its text.',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  execute: (args: { text: string }) => `echo: ${args.text}`,
}

async function runTurn(agent: Agent): Promise<void> {
  agent.followup('hello')
  await agent.whenIdle()
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
