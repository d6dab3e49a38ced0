import { expect } from 'chai'
import { approvalScene, scriptCalls, toolResults } from './fixture.ts'

describe('Approvals policy (SPEC §11.1)', () => {
  it('lets every call run under the default config, asking nothing', async () => {
    const s = await approvalScene()
    s.tool('shell')
    const { agent } = await s.create()
    scriptCalls(s, [['shell']])
    agent.followup('go')
    await agent.whenIdle()
    expect(s.ran).to.deep.equal(['shell'])
    expect(s.asked).to.deep.equal([])
  })

  it('denies a call the policy denies with the exact error and code DENIED, asking nothing', async () => {
    const s = await approvalScene({ default: 'deny' })
    s.tool('shell')
    const { agent } = await s.create()
    const result = await s.root.tools.execute({ name: 'shell', arguments: {}, agent })
    expect(result).to.deep.equal({
      isError: true,
      content: [{ type: 'text', text: 'Error: tool call "shell" was denied: denied by policy' }],
      code: 'DENIED',
    })
    expect(s.ran).to.deep.equal([])
    expect(s.asked).to.deep.equal([])
    expect(agent.session.events.filter((event) => event.type.startsWith('approval/'))).to.deep.equal([])
  })

  it('lets the model see the denial and go on with its turn', async () => {
    const s = await approvalScene({ default: 'deny' })
    s.tool('shell')
    const { agent } = await s.create()
    scriptCalls(s, [['shell']], 'I could not run it')
    agent.followup('go')
    await agent.whenIdle()
    expect(toolResults(agent)).to.deep.equal([['shell', 'Error: tool call "shell" was denied: denied by policy']])
    const last = s.scripted.requests.at(-1)!
    expect(last.messages.at(-1)).to.deep.include({ role: 'tool', name: 'shell', isError: true })
    expect(agent.session.events.at(-1)!.data).to.deep.equal({ turn: 1, reason: { kind: 'completed' } })
  })

  it('lets the first matching rule win over readOnly and default', async () => {
    const s = await approvalScene({
      default: 'deny',
      readOnly: 'deny',
      rules: [
        { tool: 'read_file', decision: 'allow' },
        { tool: 'read_*', decision: 'deny' },
        { tool: 'mcp__*', decision: 'allow' },
      ],
    })
    for (const name of ['read_file', 'read_dir', 'mcp__github__search', 'other']) s.tool(name, { readOnly: true })
    const { agent } = await s.create()
    const texts: string[] = []
    for (const name of ['read_file', 'read_dir', 'mcp__github__search', 'other']) {
      const result = await s.root.tools.execute({ name, arguments: {}, agent })
      texts.push(result.content.map((block) => (block.type === 'text' ? block.text : '')).join(''))
    }
    expect(texts).to.deep.equal([
      'read_file ran',
      'Error: tool call "read_dir" was denied: denied by policy',
      'mcp__github__search ran',
      'Error: tool call "other" was denied: denied by policy',
    ])
  })

  it('decides a tool marked read-only by readOnly and any other by default', async () => {
    const s = await approvalScene({ default: 'deny', readOnly: 'allow' })
    s.tool('ls', { readOnly: true })
    s.tool('rm')
    const { agent } = await s.create()
    expect((await s.root.tools.execute({ name: 'ls', arguments: {}, agent })).isError).to.equal(false)
    expect((await s.root.tools.execute({ name: 'rm', arguments: {}, agent })).code).to.equal('DENIED')
  })

  it('never asks about or denies structured_output, whatever the policy says', async () => {
    const s = await approvalScene({ default: 'deny', rules: [{ tool: 'structured_output', decision: 'deny' }] })
    s.tool('structured_output')
    const { agent } = await s.create()
    const result = await s.root.tools.execute({ name: 'structured_output', arguments: {}, agent })
    expect(result.isError).to.equal(false)
    expect(s.asked).to.deep.equal([])
  })

  it('holds the subagent tool to the rules like any tool', async () => {
    const { SubagentTool } = await import('../../plugins/subagent-tool/index.ts')
    const s = await approvalScene({ rules: [{ tool: 'subagent', decision: 'deny' }] }, [SubagentTool])
    const { agent } = await s.create()
    scriptCalls(s, [['subagent', { prompt: 'do it' }]], 'ok')
    agent.followup('go')
    await agent.whenIdle()
    expect(toolResults(agent)).to.deep.equal([['subagent', 'Error: tool call "subagent" was denied: denied by policy']])
    expect(s.root.agents.list()).to.have.length(1)
  })

  it('judges an agent option approval beside the deployment policy, the stricter winning', async () => {
    const s = await approvalScene({ default: 'allow' })
    s.tool('shell')
    s.tool('ls')
    const { agent } = await s.create({ agentOptions: { approval: { rules: [{ tool: 'shell', decision: 'deny' }] } } })
    expect((await s.root.tools.execute({ name: 'shell', arguments: {}, agent })).code).to.equal('DENIED')
    expect((await s.root.tools.execute({ name: 'ls', arguments: {}, agent })).isError).to.equal(false)
  })

  it('keeps a deny of the deployment policy that an agent option allows', async () => {
    const s = await approvalScene({ rules: [{ tool: 'shell', decision: 'deny' }] })
    s.tool('shell')
    const { agent } = await s.create({ agentOptions: { approval: { default: 'allow', rules: [{ tool: 'shell', decision: 'allow' }] } } })
    expect((await s.root.tools.execute({ name: 'shell', arguments: {}, agent })).code).to.equal('DENIED')
  })
})
