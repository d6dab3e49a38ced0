import { expect } from 'chai'
import type { ToolResult } from '../../lib/types.ts'
import { createFixture, delegate, type Fixture, textOf } from './fixture.ts'

describe('subagent tool: restriction inheritance (SPEC §8.3)', () => {
  /**
   * Registers a `shell` tool that records its runs, lets `deny` keep it from the parent, then lets
   * the parent's model delegate `rm -rf /` to a child whose model calls it and then answers
   * `childText`; the runs, the child's shell results and the tool result the parent got.
   */
  async function delegateShell(fixture: Fixture, deny: () => void, childText: string) {
    const ran: unknown[] = []
    fixture.host.root.tools.register({
      name: 'shell',
      description: 'runs a command',
      parameters: { type: 'object', properties: { command: { type: 'string' } } },
      execute: (args) => {
        ran.push(args)
        return 'rm -rf done'
      },
    })
    deny()
    const childResults: ToolResult[] = []
    const off = fixture.host.root.on('tools/result', (exec, result) => {
      if (exec.name === 'shell') childResults.push(result)
    })
    const { result } = await delegate(
      fixture,
      { prompt: 'run rm -rf /' },
      { toolCalls: [{ id: 'call_shell', name: 'shell', arguments: { command: 'rm -rf /' } }] },
      { text: childText },
    )
    off()
    return { ran, childResults, result }
  }

  it("does not let a parent restricted with deny: ['shell'] run shell through a child started by the subagent tool", async () => {
    const fixture = await createFixture()
    const { ran, childResults, result } = await delegateShell(
      fixture,
      () => fixture.parent.ctx.tools.restrict({ deny: ['shell'] }),
      'shell is not available to me',
    )
    expect(ran).to.deep.equal([])
    expect(childResults.map((r) => r.content)).to.deep.equal([[{ type: 'text', text: 'Error: unknown tool "shell"' }]])
    expect(textOf(result)).to.equal('shell is not available to me')
  })

  it('does not let a parent whose guard denies shell run it through a child started by the subagent tool', async () => {
    const fixture = await createFixture()
    const { ran, childResults, result } = await delegateShell(
      fixture,
      () => fixture.parent.ctx.tools.guard((exec) => (exec.name === 'shell' ? 'shell needs an operator' : undefined)),
      'shell was denied',
    )
    expect(ran).to.deep.equal([])
    expect(childResults).to.deep.equal([{ isError: true, content: [{ type: 'text', text: 'Error: shell needs an operator' }], code: 'TOOL_DENIED' }])
    expect(textOf(result)).to.equal('shell was denied')
  })

  it('does not let a parent whose tools/pre-execute listener denies shell run it through a child started by the subagent tool', async () => {
    const fixture = await createFixture()
    const { ran, childResults, result } = await delegateShell(
      fixture,
      () =>
        void fixture.parent.ctx.on('tools/pre-execute', (exec, next) =>
          exec.name === 'shell' ? { kind: 'deny', reason: 'shell needs an operator' } : next(),
        ),
      'shell was denied',
    )
    expect(ran).to.deep.equal([])
    expect(childResults).to.deep.equal([{ isError: true, content: [{ type: 'text', text: 'Error: shell needs an operator' }], code: 'TOOL_DENIED' }])
    expect(textOf(result)).to.equal('shell was denied')
  })

  it("rejects tools.allow naming a tool the parent is denied, with the parent's reason and no child", async () => {
    const fixture = await createFixture()
    fixture.host.root.tools.register({ name: 'shell', description: 'runs a command', parameters: { type: 'object' }, execute: () => 'ran' })
    fixture.parent.ctx.tools.restrict({ deny: ['shell'] })
    const starts: unknown[] = []
    const offStart = fixture.host.root.on('subagent/start', (info) => void starts.push(info))
    const { result, agentsAtResult } = await delegate(fixture, { prompt: 'run it', tools: { allow: ['shell'] } })
    offStart()
    expect(result).to.deep.equal({
      isError: true,
      content: [{ type: 'text', text: 'Error: subagent tool "shell" is not available to the parent' }],
      code: 'TOOL_FAILED',
    })
    expect(starts).to.deep.equal([])
    expect(agentsAtResult).to.deep.equal([fixture.parent.id])
  })

  it('hides from a grandchild the tool its grandparent is denied', async () => {
    const fixture = await createFixture()
    fixture.host.root.tools.register({ name: 'shell', description: 'runs a command', parameters: { type: 'object' }, execute: () => 'ran' })
    fixture.host.root.tools.register({ name: 'read', description: 'reads', parameters: { type: 'object' }, execute: () => 'read' })
    fixture.parent.ctx.tools.restrict({ deny: ['shell'] })
    const { scripted } = fixture.host
    const { result } = await delegate(
      fixture,
      { prompt: 'delegate again' },
      { toolCalls: [{ id: 'call_inner', name: 'subagent', arguments: { prompt: 'list your tools' } }] },
      (request) => ({ text: (request.tools ?? []).map((tool) => tool.name).join(',') }),
      { text: 'child done' },
    )
    expect(textOf(result)).to.equal('child done')
    const grandchildRequest = scripted.requests[2]!
    expect(grandchildRequest.tools?.map((tool) => tool.name)).to.deep.equal(['read', 'subagent'])
  })
})
