/**
 * McpTools against the Streamable HTTP fixture server on 127.0.0.1.
 */
import { expect } from 'chai'
import { type HttpFixture, startHttpFixture } from '../fixtures/mcp/http-server.ts'
import { mcpScene, until } from './fixture.ts'

describe('McpTools: a Streamable HTTP server', function () {
  this.timeout(40_000)
  let server: HttpFixture | undefined

  afterEach(async () => {
    await server?.close()
    server = undefined
  })

  it('registers its tools and calls them over HTTP, sending the configured headers', async () => {
    server = await startHttpFixture()
    const host = await mcpScene({ servers: { web: { url: server.url, headers: { 'x-team': 'blue' } } } })
    expect(host.mcpTools()).to.have.length(9)
    const echo = await host.root.tools.execute({ name: 'mcp__web__echo', arguments: { text: 'over http' } })
    expect(echo).to.deep.equal({ isError: false, content: [{ type: 'text', text: 'over http' }] })
    expect(server.headers.every((headers) => headers['x-team'] === 'blue')).to.equal(true)
  })

  it('cancels the request on the server when the execution is aborted', async () => {
    server = await startHttpFixture()
    const host = await mcpScene({ servers: { web: { url: server.url } } })
    const controller = new AbortController()
    const call = host.root.tools.execute({ name: 'mcp__web__wait', arguments: {}, signal: controller.signal })
    setTimeout(() => controller.abort(), 200)
    expect((await call).isError).to.equal(true)
    let count: unknown
    await until(() => {
      void host.root.tools.execute({ name: 'mcp__web__cancellations', arguments: {} }).then((r) => (count = r.value))
      return (count as { count?: number } | undefined)?.count === 1
    })
  })

  it('finds a server gone at the next call: an error result, its tools removed, one log line, and back when it is', async () => {
    server = await startHttpFixture()
    const port = Number(new URL(server.url).port)
    const host = await mcpScene({ servers: { web: { url: server.url } } })
    await server.close()
    const result = await host.root.tools.execute({ name: 'mcp__web__echo', arguments: { text: 'x' } })
    expect([result.isError, result.code]).to.deep.equal([true, 'MCP_FAILED'])
    expect(result.content[0]).to.deep.include({ type: 'text' })
    expect((result.content[0] as { text: string }).text).to.match(/^Error: MCP server "web" could not be reached: /)
    await until(() => host.mcpTools().length === 0)
    const stopped = host.lines().filter((line) => line.includes('stopped'))
    expect(stopped).to.have.length(1)
    // the cause is the call's refused connection or the event stream's closed socket, whichever came first
    expect(stopped[0]).to.match(/^MCP server "web" stopped: the connection closed \(fetch failed \((ECONNREFUSED|UND_ERR_SOCKET)\)\); its tools are removed until it is back \(reconnecting in 50 ms\)$/)
    server = await startHttpFixture('normal', port)
    await until(() => host.mcpTools().length === 9)
  })

  it('logs a server that cannot be reached at start, and keeps trying', async () => {
    server = await startHttpFixture()
    const url = server.url
    await server.close()
    server = undefined
    const host = await mcpScene({ servers: { web: { url } } })
    expect(host.lines()[0]).to.equal('MCP server "web" failed to start: fetch failed (ECONNREFUSED); retrying in 50 ms')
    await until(() => host.lines().filter((line) => line.includes('failed to start')).length >= 2)
  })
})
