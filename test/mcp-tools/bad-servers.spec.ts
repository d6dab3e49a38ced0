/**
 * Servers that misbehave: each ends in a clear log line or error result, the host keeps running,
 * no unhandled rejection (the suite's hook fails on one) and no process or listener left behind
 * (the scene's close checks).
 */
import { expect } from 'chai'
import { CUT_MARKER, MAX_DESCRIPTION_CHARS, MAX_TOOLS_PER_SERVER } from '../../lib/mcp/tool-listing.ts'
import { mcpScene, stdioServer, until } from './fixture.ts'

describe('McpTools: servers that misbehave', function () {
  this.timeout(60_000)

  it('ignores junk a server prints on stdout, logs it once, and keeps working', async () => {
    const host = await mcpScene({ servers: { noisy: stdioServer('junk-stdout') } })
    expect(host.mcpTools()).to.have.length(9)
    await until(() => host.lines().some((line) => line.includes('not a JSON-RPC message')))
    const junk = host.lines().filter((line) => line.includes('not a JSON-RPC message'))
    expect(junk).to.have.length(1)
    expect(junk[0]).to.match(/^MCP server "noisy" sent something that is not a JSON-RPC message \(ignored; later ones are not logged\): /)
    const echo = await host.root.tools.execute({ name: 'mcp__noisy__echo', arguments: { text: 'still here' } })
    expect(echo.content).to.deep.equal([{ type: 'text', text: 'still here' }])
  })

  it('registers the good tools of a malformed list and names each bad one in one log line', async () => {
    const host = await mcpScene({ servers: { odd: stdioServer('bad-list') } })
    expect(host.mcpTools()).to.deep.equal(['mcp__odd__echo'])
    const skipped = host.lines().filter((line) => line.includes('cannot be used'))
    expect(skipped).to.deep.equal([
      'MCP server "odd" listed 6 tools that cannot be used, left out: ' +
        '"has.dot": the name must be letters, digits, "_" or "-", and "mcp__odd__<name>" at most 64 characters; ' +
        `"${'x'.repeat(60)}…": the name must be letters, digits, "_" or "-", and "mcp__odd__<name>" at most 64 characters; ` +
        '"stringly": inputSchema is not an object JSON schema; ' +
        '"no-schema": inputSchema is not an object JSON schema; ' +
        '"echo": listed twice; and 1 more',
    ])
  })

  it(`registers at most ${MAX_TOOLS_PER_SERVER} of a server's 10,000 tools and says so`, async () => {
    const host = await mcpScene({ servers: { big: stdioServer('many-tools') } })
    expect(host.mcpTools()).to.have.length(MAX_TOOLS_PER_SERVER)
    expect(host.lines()).to.include(`MCP server "big" lists more than ${MAX_TOOLS_PER_SERVER} tools (10000 seen): only the first ${MAX_TOOLS_PER_SERVER} are registered`)
    // the fixture has no body for them: its answer shows the call reached it
    const call = await host.root.tools.execute({ name: 'mcp__big__t0', arguments: {} })
    expect(call.content).to.deep.equal([{ type: 'text', text: 'Error: unknown tool t0' }])
  })

  it('cuts a 5 MB description to the size a model request can carry', async () => {
    const host = await mcpScene({ servers: { wordy: stdioServer('huge-description') } })
    const description = host.root.tools.get('mcp__wordy__huge')!.description
    expect(description).to.have.length(MAX_DESCRIPTION_CHARS)
    expect(description.endsWith(CUT_MARKER)).to.equal(true)
  })

  it('gives up on a server that hangs during initialize after startTimeout, logs it, and kills it on unload', async () => {
    const host = await mcpScene({ servers: { stuck: stdioServer('hang-initialize') }, startTimeout: 1500 })
    expect(host.lines()).to.include('MCP server "stuck" failed to start: no answer within 1500 ms; retrying in 50 ms')
    expect(host.mcpTools()).to.deep.equal([])
    // the scene's close checks that the stuck process, which ignores the end of its input, is gone
  })
})
