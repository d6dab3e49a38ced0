/**
 * The console transcript of four children streaming side by side from a real OpenAI-compatible
 * stream (a fake server that sends one word per chunk, the children's chunks interleaved).
 */
import type { ServerResponse } from 'node:http'
import { expect } from 'chai'
import { Context } from 'cordis'
import { printTranscript } from '../../plugins/transcript/index.ts'
import { Host } from '../../plugins/host/index.ts'
import { InProcessRun } from '../../plugins/inprocess-run/index.ts'
import { OpenAIModel } from '../../plugins/openai-model/index.ts'
import { SubagentTool } from '../../plugins/subagent-tool/index.ts'
import { type ChatServer, finishChunk, openStream, sendStream, startChatServer, textChunk, toolChunk, writeChunk } from '../openai-model/chat-server.ts'

const labels = ['alpha', 'beta', 'gamma', 'delta-long-label']
const words = Array.from({ length: 40 }, (_, index) => `word${index}`)

describe('the console transcript with four children streaming at once', function () {
  this.timeout(30_000)
  let server: ChatServer | undefined
  let host: ReturnType<Context['plugin']> | undefined

  afterEach(async () => {
    await host?.dispose()
    await server?.close()
    server = undefined
  })

  it('prints each child as whole, aligned lines, not a line per streamed chunk', async () => {
    // the children's streams, written one word at a time in turn once all four are open
    const streams: ServerResponse[] = []
    const interleave = async () => {
      for (const [index, word] of words.entries()) {
        for (const response of streams) writeChunk(response, textChunk(index ? ` ${word}` : word))
        // a real server's pace: each round reaches the children before the next is sent
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
      for (const response of streams) {
        writeChunk(response, finishChunk('stop'))
        response.end('data: [DONE]\n\n')
      }
    }
    let parentTurns = 0
    server = await startChatServer((request, response) => {
      const messages = request.body.messages as { role: string }[]
      const isChild = !JSON.stringify(messages).includes('delegate')
      if (isChild) {
        openStream(response)
        streams.push(response)
        if (streams.length === labels.length) void interleave()
        return
      }
      if (parentTurns++ > 0) return sendStream(response, [textChunk('all four done'), finishChunk('stop')])
      const calls = labels.map((label, index) => ({ index, id: `call_${index}`, name: 'subagent', arguments: JSON.stringify({ prompt: `write ${label}`, label }) }))
      sendStream(response, [toolChunk(calls), finishChunk('tool_calls')])
    })
    const root = new Context()
    host = root.plugin(Host, { maxSteps: 8 } as Host.Config)
    await host
    await root.plugin(OpenAIModel, { baseURL: server.baseURL, apiKey: 'sk-streaming-test' } as OpenAIModel.Config)
    await root.plugin(InProcessRun)
    await root.plugin(SubagentTool, {} as SubagentTool.Config)
    let printed = ''
    printTranscript(root, { out: { write: (text) => (printed += text) }, width: 100, maxLines: 40 })
    const { agent } = await root.agents.create({ agentOptions: { provider: 'openai', model: 'm' } })
    agent.followup('delegate four writing tasks')
    await agent.whenIdle()
    const lines = printed.split('\n')
    for (const label of labels) {
      const own = lines.filter((line) => line.includes(`[${label}]`))
      // 40 words of 5–6 characters make three or four lines at this width, never forty
      expect(own.length, `lines of ${label}`).to.be.within(2, 6)
      expect(own.join(' ').match(/word\d+/g)).to.deep.equal(words)
    }
    // the tags are padded to the longest label: every child's text starts in one column
    const columns = new Set(lines.filter((line) => /\[(alpha|beta|gamma|delta-long-label)\]/.test(line)).map((line) => line.search(/\] +\S/) + line.slice(line.search(/\] +\S/)).search(/[^\] ]/)))
    expect(columns.size).to.equal(1)
  })
})
