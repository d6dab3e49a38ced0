/**
 * McpTools against the real stdio fixture server: what a server's tools become in the host, and
 * what a call returns.
 */
import { expect } from 'chai'
import sinon from 'sinon'
import type { ToolDefinition } from '../../lib/types.ts'
import { Tools } from '../../plugins/host/tools/index.ts'
import { fixturePids, mcpScene, sharedMcpHost, stdioServer } from './fixture.ts'

describe('McpTools: a stdio server\'s tools in the host', function () {
  this.timeout(30_000)

  afterEach(() => sinon.restore())

  it('registers every tool of the server as a global tool mcp__<server>__<tool>', async () => {
    const host = await mcpScene({ servers: { fx: stdioServer() } })
    expect(host.mcpTools()).to.deep.equal([
      'mcp__fx__cancellations',
      'mcp__fx__crash',
      'mcp__fx__echo',
      'mcp__fx__fail',
      'mcp__fx__grow',
      'mcp__fx__media',
      'mcp__fx__pid',
      'mcp__fx__structured',
      'mcp__fx__wait',
    ])
  })

  it("gives each tool the server's description and inputSchema, concurrent, and readOnly from readOnlyHint", async () => {
    const register = sinon.spy(Tools.prototype, 'register')
    const host = await mcpScene({ servers: { fx: stdioServer() } })
    const defs = new Map(register.args.map(([def]) => [def.name, def as ToolDefinition]))
    const echo = defs.get('mcp__fx__echo')!
    expect([echo.description, echo.parameters, echo.concurrent, echo.readOnly]).to.deep.equal([
      'Returns its text.',
      { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      true,
      true,
    ])
    expect(defs.get('mcp__fx__wait')!.readOnly).to.equal(false)
    expect(host.root.tools.get('mcp__fx__echo')!.description).to.equal('Returns its text.')
  })

  describe('calls', () => {
  let host: Awaited<ReturnType<typeof sharedMcpHost>>
  before(async () => {
    host = await sharedMcpHost({ servers: { fx: stdioServer() } })
  })
  after(() => host.close())

  it('returns text content as text blocks', async () => {
    const result = await host.root.tools.execute({ name: 'mcp__fx__echo', arguments: { text: 'hello' } })
    expect(result).to.deep.equal({ isError: false, content: [{ type: 'text', text: 'hello' }] })
  })

  it('describes each non-text content block in one line: type, MIME type, size or URI', async () => {
    const result = await host.root.tools.execute({ name: 'mcp__fx__media', arguments: {} })
    expect(result.content.map((block) => (block.type === 'text' ? block.text : block.type))).to.deep.equal([
      '[image: image/png, 70 bytes]',
      '[audio: audio/wav, 3 bytes]',
      '[resource link: file:///notes/a.txt, text/plain]',
      '[resource: file:///b.bin, application/octet-stream, 6 bytes]',
      'and some text',
    ])
  })

  it('returns structuredContent as the result value', async () => {
    const result = await host.root.tools.execute({ name: 'mcp__fx__structured', arguments: {} })
    expect([result.isError, result.value, result.content]).to.deep.equal([false, { answer: 42 }, [{ type: 'text', text: 'the answer' }]])
  })

  it('turns a result with isError into an error result with its text', async () => {
    const result = await host.root.tools.execute({ name: 'mcp__fx__fail', arguments: {} })
    expect(result).to.deep.equal({ isError: true, content: [{ type: 'text', text: 'Error: the fixture failed on purpose' }], code: 'TOOL_FAILED' })
  })

  it("validates arguments against the server's inputSchema before anything is sent", async () => {
    const result = await host.root.tools.execute({ name: 'mcp__fx__echo', arguments: { text: 7 } })
    expect([result.isError, result.code]).to.deep.equal([true, 'INVALID_ARGS'])
    const count = await host.root.tools.execute({ name: 'mcp__fx__cancellations', arguments: {} })
    expect(count.value).to.deep.equal({ count: 0 })
  })

  it('keeps one connection (one server process) for every agent and child of the process', async () => {
    const agents = await Promise.all([host.agent(), host.agent(), host.agent()])
    const pids = await Promise.all(
      agents.map(async (agent) => {
        const result = await host.root.tools.execute({ name: 'mcp__fx__pid', arguments: {}, agent })
        return result.content[0]?.type === 'text' ? result.content[0].text : ''
      }),
    )
    expect(new Set(pids).size).to.equal(1)
    expect(fixturePids().map(String)).to.deep.equal([pids[0]])
  })
})
})
