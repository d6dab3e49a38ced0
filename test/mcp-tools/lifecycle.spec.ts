/**
 * McpTools over a server's life: cancellation and timeouts reaching the server, list changes,
 * a server that dies or never starts, reconnection, and unload/reload/update leaving no process.
 */
import { expect } from 'chai'
import type { ToolResult } from '../../lib/types.ts'
import McpTools from '../../plugins/mcp-tools/index.ts'
import { isAlive } from '../../plugins/mcp-tools/process-exit.ts'
import { fastConfig, fixturePids, mcpScene, mcpToolsOf, stdioServer, until } from './fixture.ts'

function textOf(result: ToolResult): string {
  return result.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n')
}

describe('McpTools: a server over its life', function () {
  this.timeout(120_000)

  it('cancels the request on the server when the execution is aborted', async () => {
    const host = await mcpScene({ servers: { fx: stdioServer() } })
    const controller = new AbortController()
    const call = host.root.tools.execute({ name: 'mcp__fx__wait', arguments: {}, signal: controller.signal })
    setTimeout(() => controller.abort(new Error('stop')), 200)
    const result = await call
    expect([result.isError, textOf(result)]).to.deep.equal([true, 'Error: the call to MCP server "fx" was cancelled'])
    let count: unknown
    await until(() => {
      void host.root.tools.execute({ name: 'mcp__fx__cancellations', arguments: {} }).then((r) => (count = r.value))
      return (count as { count?: number } | undefined)?.count === 1
    })
  })

  it('ends a call past timeout with the pinned error, and the server is told to cancel it', async () => {
    const host = await mcpScene({ servers: { fx: stdioServer() }, timeout: 300 })
    const result = await host.root.tools.execute({ name: 'mcp__fx__wait', arguments: {} })
    expect(result).to.deep.equal({
      isError: true,
      content: [{ type: 'text', text: 'Error: MCP server "fx" did not answer within 300 ms' }],
      code: 'MCP_TIMEOUT',
    })
    const count = await host.root.tools.execute({ name: 'mcp__fx__cancellations', arguments: {} })
    expect(count.value).to.deep.equal({ count: 1 })
  })

  it('re-lists and re-registers the tools on notifications/tools/list_changed', async () => {
    const host = await mcpScene({ servers: { fx: stdioServer() } })
    expect(host.mcpTools()).not.to.include('mcp__fx__extra')
    await host.root.tools.execute({ name: 'mcp__fx__grow', arguments: {} })
    await until(() => host.mcpTools().includes('mcp__fx__extra'))
    expect(host.mcpTools()).to.have.length(10)
  })

  it('ends a call in flight when the server dies, removes its tools, logs why, and reconnects', async () => {
    const host = await mcpScene({ servers: { fx: stdioServer() } })
    const [first] = fixturePids()
    const result = await host.root.tools.execute({ name: 'mcp__fx__crash', arguments: {} })
    expect([result.isError, textOf(result), result.code]).to.deep.equal([
      true,
      'Error: MCP server "fx" closed the connection during the call',
      'MCP_FAILED',
    ])
    const stopped = host.lines().filter((line) => line.includes('stopped'))
    expect(stopped).to.deep.equal([
      'MCP server "fx" stopped: its process exited (stderr: "fixture: crashing on purpose"); its tools are removed until it is back (reconnecting in 50 ms)',
    ])
    await until(() => fixturePids().length === 1 && fixturePids()[0] !== first && host.mcpTools().length === 9)
    expect(isAlive(first!)).to.equal(false)
    const echo = await host.root.tools.execute({ name: 'mcp__fx__echo', arguments: { text: 'back' } })
    expect(textOf(echo)).to.equal('back')
  })

  it('takes the tools away while the server is down', async () => {
    const host = await mcpScene({ servers: { fx: stdioServer() }, reconnectDelay: 60_000, maxReconnectDelay: 60_000 })
    await host.root.tools.execute({ name: 'mcp__fx__crash', arguments: {} })
    await until(() => host.mcpTools().length === 0)
    const result = await host.root.tools.execute({ name: 'mcp__fx__echo', arguments: { text: 'x' } })
    expect(result.code).to.equal('UNKNOWN_TOOL')
  })

  it('logs a server that fails to start, with why, and tries again with a growing delay', async () => {
    const host = await mcpScene({ servers: { bad: stdioServer('fail-start') } })
    await until(() => host.lines().filter((line) => line.includes('failed to start')).length >= 3, 80_000)
    const lines = host.lines().filter((line) => line.includes('failed to start'))
    expect(lines.slice(0, 3)).to.deep.equal([50, 100, 200].map(
      (ms) => `MCP server "bad" failed to start: its process exited (stderr: "fixture: cannot open its database"); retrying in ${ms} ms`,
    ))
    expect(host.mcpTools()).to.deep.equal([])
  })

  it('keeps the other servers working while one fails', async () => {
    const host = await mcpScene({ servers: { bad: stdioServer('fail-start'), fx: stdioServer() } })
    await until(() => host.lines().some((line) => line.includes('"bad" failed to start')))
    expect(host.mcpTools()).to.have.length(9)
    const echo = await host.root.tools.execute({ name: 'mcp__fx__echo', arguments: { text: 'fine' } })
    expect(textOf(echo)).to.equal('fine')
  })

  it('leaves no server process behind when the plugin is unloaded', async () => {
    const host = await mcpScene({ servers: { a: stdioServer(), b: stdioServer() } })
    const pids = fixturePids()
    expect(pids).to.have.length(2)
    await host.mcp.dispose()
    host.baseline = host.snapshots[0]!
    expect(pids.filter(isAlive)).to.deep.equal([])
    expect(mcpToolsOf(host)).to.deep.equal([])
  })

  it('ends a call in flight as an error result when the plugin is unloaded', async () => {
    const host = await mcpScene({ servers: { fx: stdioServer() } })
    const call = host.root.tools.execute({ name: 'mcp__fx__wait', arguments: {} })
    await new Promise((resolve) => setTimeout(resolve, 200))
    await host.mcp.dispose()
    host.baseline = host.snapshots[0]!
    const result = await call
    expect([result.isError, textOf(result)]).to.deep.equal([true, 'Error: MCP server "fx" closed the connection during the call'])
  })

  it('starts a new server process on reload, and the old one is gone', async () => {
    const host = await mcpScene({ servers: { fx: stdioServer() } })
    const [old] = fixturePids()
    await host.mcp.dispose()
    host.baseline = host.snapshots[0]!
    const reloaded = host.load(McpTools, { ...fastConfig, servers: { fx: stdioServer() } })
    await reloaded
    await host.root.mcpTools.ready()
    expect(isAlive(old!)).to.equal(false)
    expect(fixturePids()).to.have.length(1).and.not.include(old)
    expect(mcpToolsOf(host)).to.have.length(9)
  })

  it('follows a config update: servers removed are closed, servers added are started', async () => {
    const host = await mcpScene({ servers: { one: stdioServer() } })
    const [old] = fixturePids()
    await host.mcp.update({ ...fastConfig, servers: { two: stdioServer() } })
    await host.root.mcpTools.ready()
    expect(isAlive(old!)).to.equal(false)
    expect(fixturePids()).to.have.length(1)
    expect(host.mcpTools().every((name) => name.startsWith('mcp__two__'))).to.equal(true)
    expect(host.mcpTools()).to.have.length(9)
  })

  it('closes a server still starting when the plugin is unloaded, process and all', async () => {
    const host = await mcpScene({ servers: { fx: stdioServer() } })
    await host.mcp.dispose()
    host.baseline = host.snapshots[0]!
    const loading = host.load(McpTools, { ...fastConfig, servers: { slow: stdioServer('hang-initialize') } })
    await until(() => fixturePids().length === 1)
    const [pid] = fixturePids()
    await loading.dispose()
    expect(isAlive(pid!)).to.equal(false)
  })
})
