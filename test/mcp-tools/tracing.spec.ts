/**
 * An MCP tool call traced by \`Tracing\` like any tool call.
 */
import { expect } from 'chai'
import Tracing from '../../plugins/tracing/index.ts'
import { spanRecorder } from '../tracing/recorder.ts'
import { mcpScene, stdioServer } from './fixture.ts'

describe('McpTools with Tracing', function () {
  this.timeout(40_000)

  it('traces an MCP tool call as an execute_tool span', async () => {
    const recorder = spanRecorder()
    recorder.reset()
    const host = await mcpScene({ servers: { fx: stdioServer() } }, [[Tracing, {}]])
    const agent = await host.agent()
    host.scripted.push({ toolCalls: [{ id: 'c1', name: 'mcp__fx__echo', arguments: { text: 'traced' } }] }, { text: 'done' })
    agent.followup('go')
    await agent.whenIdle()
    const span = recorder.spans().find((candidate) => candidate.name === 'execute_tool mcp__fx__echo')
    expect(span?.attributes).to.deep.include({ 'gen_ai.tool.name': 'mcp__fx__echo', 'gen_ai.tool.call.id': 'c1' })
  })
})
