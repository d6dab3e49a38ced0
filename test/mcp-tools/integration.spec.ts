/**
 * MCP tools are ordinary global tools: restrictions, restriction inheritance through the driver,
 * Code Mode bindings, tracing spans and the YAML host config apply to them unchanged.
 */
import { writeFileSync } from 'node:fs'
import { expect } from 'chai'
import type { Agent } from '../../lib/types.ts'
import AgentDefinitions from '../../plugins/agent-definitions/index.ts'
import Approvals from '../../plugins/approvals/index.ts'
import CodeMode from '../../plugins/code-mode/index.ts'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import { workspace } from '../loader/fixture.ts'
import { fixturePids, mcpScene, mcpToolsOf, stdioServer } from './fixture.ts'

/** The text of each `tool/result` event of `agent`'s session. */
function resultTexts(agent: Agent): string[] {
  return agent.session.events
    .filter((event) => event.type === 'tool/result')
    .map((event) => (event.data as { content: { text?: string }[] }).content.map((block) => block.text ?? '').join('\n'))
}

describe('McpTools: MCP tools go through everything else unchanged', function () {
  this.timeout(40_000)

  it("hides an MCP tool from an agent that restricts it, in schemas and execution", async () => {
    const host = await mcpScene({ servers: { fx: stdioServer() } })
    const agent = await host.agent()
    agent.ctx.tools.restrict({ deny: ['mcp__fx__echo'] })
    expect(host.root.tools.schemas(agent).map((schema) => schema.name)).not.to.include('mcp__fx__echo')
    const result = await host.root.tools.execute({ name: 'mcp__fx__echo', arguments: { text: 'x' }, agent })
    expect(result.code).to.equal('UNKNOWN_TOOL')
  })

  it('gives a child started with inheritRestrictions only the MCP tools its parent sees, and the child calls one', async () => {
    const host = await mcpScene({ servers: { fx: stdioServer() } }, [InProcessRun])
    const parent = await host.agent()
    parent.ctx.tools.restrict({ allow: ['mcp__fx__echo', 'mcp__fx__pid'] })
    host.scripted.push({ toolCalls: [{ name: 'mcp__fx__echo', arguments: { text: 'from the child' } }] }, { text: 'done' })
    const run = await host.root.inprocessRun.spawn({ parent, prompt: 'echo something', signal: new AbortController().signal, inheritRestrictions: true, toolFilter: { allow: ['mcp__fx__echo'] } })
    const result = await run.result
    expect(result.stopReason).to.equal('completed')
    expect(host.scripted.requests[0]!.tools!.map((tool) => tool.name)).to.deep.equal(['mcp__fx__echo'])
    expect(resultTexts(run.agent)).to.deep.equal(['from the child'])
    await run.dispose()
  })

  it("gives a child started from a definition with tools [mcp__fx__*] exactly that server's tools, and none of another server's", async () => {
    const echoer = { name: 'echoer', description: 'Echoes through the fx server.', tools: ['mcp__fx__*'] }
    const host = await mcpScene({ servers: { fx: stdioServer(), fy: stdioServer() } }, [InProcessRun, [AgentDefinitions, { dirs: [], watch: false, definitions: [echoer] }]])
    host.root.tools.register({ name: 'local_note', description: 'A local tool.', parameters: { type: 'object' }, execute: () => 'noted' })
    const parent = await host.agent()
    const fx = host.mcpTools().filter((name) => name.startsWith('mcp__fx__'))
    expect(fx).to.include('mcp__fx__echo')
    expect(host.mcpTools().some((name) => name.startsWith('mcp__fy__'))).to.equal(true)
    host.scripted.push({ toolCalls: [{ name: 'mcp__fx__echo', arguments: { text: 'by definition' } }] }, { text: 'done' })
    const run = await host.root.inprocessRun.spawn({ parent, prompt: 'echo', agent: 'echoer', signal: new AbortController().signal })
    const result = await run.result
    expect(result.stopReason).to.equal('completed')
    expect(host.scripted.requests[0]!.tools!.map((tool) => tool.name)).to.deep.equal(fx)
    expect(resultTexts(run.agent)).to.deep.equal(['by definition'])
    await run.dispose()
  })

  it('binds MCP tools in Code Mode, like any tool the agent sees', async () => {
    const host = await mcpScene({ servers: { fx: stdioServer() } }, [[CodeMode, {}]])
    const agent = await host.agent()
    const code = "const a = await tools.mcp__fx__echo({ text: 'one' }); const s = await tools.mcp__fx__structured({}); return [a, s]"
    const result = await host.root.tools.execute({ name: 'run_code', arguments: { code }, agent })
    expect([result.isError, result.value]).to.deep.equal([false, ['one', { answer: 42 }]])
  })

  it("reaches the host's approval point with readOnly from readOnlyHint, and a deny there keeps the call from the server", async () => {
    const host = await mcpScene({ servers: { fx: stdioServer() } })
    const seen: [string, boolean][] = []
    host.on('tools/approve', (exec, tool, next) => {
      seen.push([exec.name, tool.readOnly])
      return exec.name.startsWith('mcp__') && !tool.readOnly ? { kind: 'deny', reason: 'mcp__* needs a person' } : next()
    })
    const echo = await host.root.tools.execute({ name: 'mcp__fx__echo', arguments: { text: 'read-only' } })
    const wait = await host.root.tools.execute({ name: 'mcp__fx__wait', arguments: { ms: 1 } })
    expect(seen).to.deep.equal([
      ['mcp__fx__echo', true],
      ['mcp__fx__wait', false],
    ])
    expect([echo.isError, wait.content]).to.deep.equal([false, [{ type: 'text', text: 'Error: mcp__* needs a person' }]])
  })

  it('lets an Approvals rule on mcp__* ask about an MCP call, and readOnly allow a read-only MCP tool', async () => {
    const host = await mcpScene({ servers: { fx: stdioServer() } }, [
      [Approvals, { default: 'deny', readOnly: 'allow', rules: [{ tool: 'mcp__fx__w*', decision: 'ask' }] }],
    ])
    const agent = await host.agent()
    host.on('approval/asked', (request) => {
      host.root.approvals.decide(request.id, { approved: false, reason: `no ${request.tool} today` })
    })
    const echo = await host.root.tools.execute({ name: 'mcp__fx__echo', arguments: { text: 'allowed' }, agent })
    const wait = await host.root.tools.execute({ name: 'mcp__fx__wait', arguments: { ms: 1 }, agent })
    const media = await host.root.tools.execute({ name: 'mcp__fx__media', arguments: {}, agent })
    expect(echo.content).to.deep.equal([{ type: 'text', text: 'allowed' }])
    expect([wait.code, wait.content]).to.deep.equal(['DENIED', [{ type: 'text', text: 'Error: tool call "mcp__fx__wait" was denied: no mcp__fx__wait today' }]])
    expect([media.code, media.content]).to.deep.equal(['DENIED', [{ type: 'text', text: 'Error: tool call "mcp__fx__media" was denied: denied by policy' }]])
  })

  it('loads from the YAML host config, and the loader closing leaves no server process', async () => {
    const space = workspace()
    try {
      const plugins = new URL('../../plugins/', import.meta.url).pathname
      const server = stdioServer()
      writeFileSync(
        space.configFile,
        [
          'plugins:',
          `  host: { path: ${plugins}host/index.ts }`,
          `  mcp:`,
          `    path: ${plugins}mcp-tools/index.ts`,
          '    config:',
          `      servers: { fx: ${JSON.stringify(server)} }`,
        ].join('\n'),
      )
      const { root, loader } = space.loader()
      await loader.start()
      await root.mcpTools.ready()
      expect(mcpToolsOf({ root } as never)).to.have.length(9)
      expect(root.mcpTools.servers().map(({ name, connected, tools }) => [name, connected, tools.length])).to.deep.equal([['fx', true, 9]])
      await loader.dispose()
      expect(fixturePids()).to.deep.equal([])
    } finally {
      await space.cleanup()
    }
  })
})
