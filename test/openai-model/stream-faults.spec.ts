import { expect } from 'chai'
import { Context } from 'cordis'
import type { Agent, JsonValue, ModelRequest, StreamPart } from '../../lib/types.ts'
import { Host } from '../../plugins/host/index.ts'
import { InProcessRun } from '../../plugins/inprocess-run/index.ts'
import { createOpenAIAdapter } from '../../plugins/openai-model/adapter.ts'
import { ContentFilterError, ModelRequestError } from '../../plugins/openai-model/errors.ts'
import { OpenAIModel } from '../../plugins/openai-model/index.ts'
import { type ChatHandler, type ChatServer, type RecordedRequest, chunk, finishChunk, sendError, sendStream, startChatServer, textChunk, toolChunk } from './chat-server.ts'

const apiKey = 'sk-stream-faults-5d1e'
const filtered = "model request failed: the provider's content filter stopped the answer"

function makeRequest(): ModelRequest {
  return {
    agent: { id: 'agent-1' } as unknown as Agent,
    model: 'test-model',
    system: '',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }],
    signal: new AbortController().signal,
  }
}

async function collect(parts: AsyncIterable<StreamPart>): Promise<{ parts: StreamPart[]; error?: unknown }> {
  const collected: StreamPart[] = []
  try {
    for await (const part of parts) collected.push(part)
  } catch (error) {
    return { parts: collected, error }
  }
  return { parts: collected }
}

describe('openai-model adapter: stream faults', () => {
  let server: ChatServer | undefined

  afterEach(async () => {
    await server?.close()
    server = undefined
  })

  async function streamOf(chunks: Parameters<typeof sendStream>[1]) {
    server = await startChatServer((_request, response) => sendStream(response, chunks))
    return collect(createOpenAIAdapter({ baseURL: server.baseURL, apiKey }).stream(makeRequest()))
  }

  it('joins a tool-call name streamed in pieces', async () => {
    const { parts } = await streamOf([
      toolChunk([{ index: 0, id: 'call_a', name: 'get_' }]),
      toolChunk([{ index: 0, name: 'weather', arguments: '{"city":' }]),
      toolChunk([{ index: 0, arguments: '"Oslo"}' }]),
      finishChunk('tool_calls'),
    ])
    expect(parts).to.deep.equal([
      { type: 'tool-call', id: 'call_a', name: 'get_weather', arguments: '{"city":"Oslo"}' },
      { type: 'finish', reason: 'tool-calls' },
    ])
  })

  it('keeps a tool-call name that a server repeats whole in every chunk', async () => {
    const { parts } = await streamOf([
      toolChunk([{ index: 0, id: 'call_a', name: 'get_weather', arguments: '{}' }]),
      toolChunk([{ index: 0, name: 'get_weather' }]),
      finishChunk('tool_calls'),
    ])
    expect(parts[0]).to.deep.equal({ type: 'tool-call', id: 'call_a', name: 'get_weather', arguments: '{}' })
  })

  it('sends tool-call arguments a server streamed as a JSON object as their JSON text', async () => {
    const { parts } = await streamOf([
      chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: { city: 'Oslo' } } }] }),
      finishChunk('tool_calls'),
    ])
    expect(parts[0]).to.deep.equal({ type: 'tool-call', id: 'call_a', name: 'get_weather', arguments: '{"city":"Oslo"}' })
  })

  it('leaves out a tool-call id and name a server streamed as numbers instead of passing them on', async () => {
    const { parts } = await streamOf([
      chunk({ tool_calls: [{ index: 0, id: 7, type: 'function', function: { name: 5, arguments: '{}' } }] }),
      chunk({ tool_calls: [{ index: 0, id: 'call_b', function: { name: 'lookup' } }] }),
      finishChunk('tool_calls'),
    ])
    expect(parts[0]).to.deep.equal({ type: 'tool-call', id: 'call_b', name: 'lookup', arguments: '{}' })
  })

  it('gives a call whose id an earlier call of the response has, or that has none, a fresh id', async () => {
    const { parts } = await streamOf([
      toolChunk([
        { index: 0, id: 'dup', name: 'a', arguments: '{}' },
        { index: 1, id: 'dup', name: 'b', arguments: '{}' },
        { index: 2, name: 'c', arguments: '{}' },
      ]),
      finishChunk('tool_calls'),
    ])
    const ids = parts.flatMap((part) => (part.type === 'tool-call' ? [part.id] : []))
    expect(ids[0]).to.equal('dup')
    expect(ids[1]).to.match(/^call_/)
    expect(ids[2]).to.match(/^call_/)
    expect(new Set(ids).size).to.equal(3)
  })

  it('fails a content_filter finish with code CONTENT_FILTERED instead of finishing', async () => {
    const { parts, error } = await streamOf([textChunk('Here is how to'), finishChunk('content_filter')])
    expect(parts).to.deep.equal([{ type: 'text-delta', text: 'Here is how to' }])
    expect(error).to.be.instanceOf(ContentFilterError)
    expect((error as ContentFilterError).code).to.equal('CONTENT_FILTERED')
    expect((error as Error).message).to.equal(filtered)
  })

  it('fails a 200 response whose JSON body holds no stream instead of finishing with an empty answer', async () => {
    server = await startChatServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'overloaded' } }))
    })
    const { parts, error } = await collect(createOpenAIAdapter({ baseURL: server.baseURL, apiKey }).stream(makeRequest()))
    expect(parts).to.deep.equal([])
    expect(error).to.be.instanceOf(ModelRequestError)
    expect((error as ModelRequestError).message).to.equal(
      'model request failed: the response held no chat completion chunks (content-type "application/json")',
    )
  })

  const malformedChunks: [string, JsonValue, string][] = [
    ['a chunk that is not an object', 42, 'model request failed: stream chunk 2 is number, not an object'],
    ['choices that are not an array', { id: 'x', choices: { index: 0 } }, 'model request failed: stream chunk 2 choices is object, not an array'],
    [
      'tool calls that are not an array',
      { id: 'x', choices: [{ index: 0, delta: { tool_calls: { index: 0 } }, finish_reason: null }] },
      'model request failed: stream chunk 2 delta tool_calls is object, not an array',
    ],
    [
      'a tool call that is not an object',
      { id: 'x', choices: [{ index: 0, delta: { tool_calls: [null] }, finish_reason: null }] },
      'model request failed: stream chunk 2 delta tool_call is null, not an object',
    ],
  ]
  for (const [label, malformed, message] of malformedChunks) {
    it(`fails a stream with ${label}, naming the chunk and the field`, async () => {
      const { parts, error } = await streamOf([textChunk('Hel'), malformed, finishChunk('stop')])
      expect(parts).to.deep.equal([{ type: 'text-delta', text: 'Hel' }])
      expect(error).to.be.instanceOf(ModelRequestError)
      expect((error as Error).message).to.equal(message)
    })
  }

  it('fails an event stream that ends before its first chunk', async () => {
    const { parts, error } = await streamOf([])
    expect(parts).to.deep.equal([])
    expect((error as Error).message).to.equal(
      'model request failed: the response held no chat completion chunks (content-type "text/event-stream")',
    )
  })

  it('finishes without usage when the usage chunk holds no token count it can read', async () => {
    const { parts, error } = await streamOf([textChunk('ok'), finishChunk('stop'), partialUsageChunk({ total_tokens: 7 })])
    expect(error).to.equal(undefined)
    expect(parts).to.deep.equal([
      { type: 'text-delta', text: 'ok' },
      { type: 'finish', reason: 'stop' },
    ])
  })
})

/** A usage-only chunk whose `usage` is `usage` verbatim: servers and proxies leave counts out or null. */
function partialUsageChunk(usage: { [key: string]: number | null }) {
  return { id: 'chatcmpl-test', object: 'chat.completion.chunk', created: 0, model: 'test-model', choices: [], usage }
}

/**
 * A host per test (with the driver when asked) and the chat server its `openai` route talks to,
 * both torn down after each test: unloading the host disposes every agent a test created.
 */
function hostScene(options: { driver?: boolean } = {}): { root: Context; serve(handler: ChatHandler): Promise<void> } {
  let host: ReturnType<Context['plugin']>
  let server: ChatServer | undefined
  const scene = {
    root: undefined as unknown as Context,
    async serve(handler: ChatHandler): Promise<void> {
      server = await startChatServer(handler)
      await scene.root.plugin(OpenAIModel, { baseURL: server.baseURL, apiKey, apiKeyEnv: 'SUBAGENT_INPROCESS_TEST_UNSET_KEY' } as OpenAIModel.Config)
    },
  }
  beforeEach(async () => {
    scene.root = new Context()
    host = scene.root.plugin(Host, { maxSteps: 8 } as Host.Config)
    await host
    if (options.driver) await scene.root.plugin(InProcessRun)
  })
  afterEach(async () => {
    await host.dispose()
    await server?.close()
    server = undefined
  })
  return scene
}

describe('OpenAIModel: tool calls a server gave one id', () => {
  const scene = hostScene()

  it('sends each result back against the call it answers', async () => {
    let turn = 0
    const sent: RecordedRequest[] = []
    await scene.serve((request, response) => {
      sent.push(request)
      if (turn++ > 0) return sendStream(response, [textChunk('both seen'), finishChunk('stop')])
      sendStream(response, [
        toolChunk([
          { index: 0, id: 'same', name: 'echo', arguments: '{"say":"one"}' },
          { index: 1, id: 'same', name: 'echo', arguments: '{"say":"two"}' },
        ]),
        finishChunk('tool_calls'),
      ])
    })
    scene.root.tools.register({
      name: 'echo',
      description: 'Says it back.',
      parameters: { type: 'object', properties: { say: { type: 'string' } } },
      execute: (args: { say: string }) => `said ${args.say}`,
    })
    const { agent } = await scene.root.agents.create({ agentOptions: { provider: 'openai', model: 'test-model' } })
    agent.followup('echo twice')
    await agent.whenIdle()
    const messages = sent[1]!.body.messages as { role: string; tool_calls?: { id: string; function: { arguments: string } }[]; tool_call_id?: string; content?: string }[]
    const calls = messages.find((message) => message.role === 'assistant')!.tool_calls!
    const results = messages.filter((message) => message.role === 'tool')
    expect(new Set(calls.map((call) => call.id)).size).to.equal(2)
    const answered = results.map((result) => [JSON.parse(calls.find((call) => call.id === result.tool_call_id)!.function.arguments).say, result.content])
    expect(answered).to.deep.equal([
      ['one', 'said one'],
      ['two', 'said two'],
    ])
  })
})

describe('OpenAIModel: a usage chunk with a count missing', () => {
  const scene = hostScene()

  it('completes the turn with its answer, counting the missing count as 0', async () => {
    const usage = partialUsageChunk({ prompt_tokens: 12, completion_tokens: null })
    await scene.serve((_request, response) => sendStream(response, [textChunk('the answer'), finishChunk('stop'), usage]))
    const { agent } = await scene.root.agents.create({ agentOptions: { provider: 'openai', model: 'test-model' } })
    agent.followup('hello')
    await agent.whenIdle()
    const tail = agent.session.events.slice(-2).map((event) => event.data)
    expect(tail).to.deep.equal([
      { turn: 1, step: 1, content: [{ type: 'text', text: 'the answer' }], usage: { inputTokens: 12, outputTokens: 0 } },
      { turn: 1, reason: { kind: 'completed' } },
    ])
  })
})

describe('OpenAIModel: a content_filter finish in a run', () => {
  const scene = hostScene({ driver: true })

  async function serveFiltered(): Promise<void> {
    await scene.serve((_request, response) => sendStream(response, [textChunk('Partial'), finishChunk('content_filter')]))
  }

  it('ends the turn error with code CONTENT_FILTERED, never completed', async () => {
    await serveFiltered()
    const { agent } = await scene.root.agents.create({ agentOptions: { provider: 'openai', model: 'test-model' } })
    agent.followup('hello')
    await agent.whenIdle()
    const ends = agent.session.events.filter((event) => event.type === 'turn/end').map((event) => event.data)
    expect(ends).to.deep.equal([{ turn: 1, reason: { kind: 'error', error: { message: filtered, code: 'CONTENT_FILTERED' } } }])
  })

  it('reports a child cut off by the filter as error with a diagnostic naming the code', async () => {
    await serveFiltered()
    const { agent: parent } = await scene.root.agents.create({ agentOptions: { provider: 'openai', model: 'test-model' } })
    const run = await scene.root.inprocessRun.spawn({ parent, prompt: 'do it', signal: new AbortController().signal })
    const result = await run.result
    expect(result.stopReason).to.equal('error')
    expect(result.diagnostic).to.equal(`the child turn failed: ${filtered} (CONTENT_FILTERED)`)
    await run.dispose()
  })
})

/** What OpenAI answers (HTTP 400) when an assistant message's tool calls are not all answered right after it. */
const unansweredCalls = "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'."

type ChatMessage = { role: string; tool_call_id?: string; tool_calls?: { id: string }[] }

/** True when every assistant tool call is answered by the tool messages right after it, as OpenAI requires. */
function pairsEveryCall(messages: ChatMessage[]): boolean {
  return messages.every((message, index) => {
    const answered = new Set<string>()
    for (let next = index + 1; messages[next]?.role === 'tool'; next++) answered.add(messages[next]!.tool_call_id!)
    return (message.tool_calls ?? []).every((call) => answered.has(call.id))
  })
}

describe('OpenAIModel: the turn after a step cancelled between its tool calls', () => {
  const scene = hostScene()

  it('completes: the next request holds no call that was never run', async () => {
    await scene.serve((request, response) => {
      const messages = request.body.messages as ChatMessage[]
      if (!pairsEveryCall(messages)) return sendError(response, 400, { error: { message: unansweredCalls } })
      if (messages.length === 1) {
        return sendStream(response, [
          toolChunk([{ index: 0, id: 'call_a', name: 'lookup', arguments: '{}' }, { index: 1, id: 'call_b', name: 'lookup', arguments: '{}' }]),
          finishChunk('tool_calls'),
        ])
      }
      sendStream(response, [textChunk('still here'), finishChunk('stop')])
    })
    const { agent } = await scene.root.agents.create({ agentOptions: { provider: 'openai', model: 'test-model' } })
    // the first call's body cancels the turn: the second call of the step never runs
    scene.root.tools.register({
      name: 'lookup',
      description: 'Looks something up.',
      parameters: { type: 'object' },
      execute: () => {
        agent.cancel({ kind: 'user' })
        return 'found'
      },
    })
    agent.followup('look both up')
    await agent.whenIdle()
    agent.followup('and now?')
    await agent.whenIdle()
    const ends = agent.session.events.filter((event) => event.type === 'turn/end').map((event) => event.data)
    expect(ends).to.deep.equal([
      { turn: 1, reason: { kind: 'aborted', cause: { kind: 'user' } } },
      { turn: 2, reason: { kind: 'completed' } },
    ])
  })
})
