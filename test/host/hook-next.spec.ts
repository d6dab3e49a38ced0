import { expect } from 'chai'
import type { PreExecuteDecision, ToolResult } from '../../lib/types.ts'
import { scene } from '../support/scene.ts'

const echo = {
  name: 'echo',
  description: 'Echoes.',
  parameters: { type: 'object' },
  execute: () => 'echoed',
}

describe('tools hooks: next() is a promise', () => {
  it('lets a pre-execute listener chain next().then(…) when no inner listener is async', async () => {
    const s = await scene()
    s.root.tools.register(echo)
    const seen: string[] = []
    s.on('tools/pre-execute', (_exec, next) =>
      next().then((decision: PreExecuteDecision) => {
        seen.push(decision.kind)
        return decision
      }),
    )
    const result = await s.root.tools.execute({ name: 'echo', arguments: {} })
    expect(result).to.deep.equal({ isError: false, value: 'echoed', content: [{ type: 'text', text: 'echoed' }] })
    expect(seen).to.deep.equal(['allow'])
  })

  it('lets a post-execute listener chain next().then(…) without turning the result into HOOK_FAILED', async () => {
    const s = await scene()
    s.root.tools.register(echo)
    s.on('tools/post-execute', (_exec, _result, next) =>
      next().then((inner: ToolResult) => ({ ...inner, content: [{ type: 'text' as const, text: 'rewritten' }] })),
    )
    const result = await s.root.tools.execute({ name: 'echo', arguments: {} })
    expect(result.isError).to.equal(false)
    expect(result.content).to.deep.equal([{ type: 'text', text: 'rewritten' }])
  })

  it('hands an outer listener the inner listener’s plain decision as a promise', async () => {
    const s = await scene()
    s.root.tools.register(echo)
    let inner: unknown
    s.on('tools/pre-execute', (_exec, next) => {
      inner = next()
      return inner as Promise<PreExecuteDecision>
    })
    s.on('tools/pre-execute', () => ({ kind: 'deny', reason: 'not today' }))
    const result = await s.root.tools.execute({ name: 'echo', arguments: {} })
    expect(inner).to.be.instanceOf(Promise)
    expect(result).to.deep.equal({ isError: true, content: [{ type: 'text', text: 'Error: not today' }], code: 'TOOL_DENIED' })
  })

  it('reports a listener that calls next() twice as HOOK_FAILED', async () => {
    const s = await scene()
    s.root.tools.register(echo)
    s.on('tools/pre-execute', async (_exec, next) => {
      await next()
      return next()
    })
    const result = await s.root.tools.execute({ name: 'echo', arguments: {} })
    expect(result).to.deep.equal({
      isError: true,
      content: [{ type: 'text', text: 'Error: tools/pre-execute listener failed: next() called twice in a "tools/pre-execute" listener' }],
      code: 'HOOK_FAILED',
    })
  })
})
