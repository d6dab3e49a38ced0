import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { expect } from 'chai'
import { createOpenAIAdapter, type OpenAIAdapterOptions } from '../../plugins/openai-model/adapter.ts'
import { ModelRequestError } from '../../plugins/openai-model/errors.ts'
import type { Agent, ModelAdapter, ModelRequest, StreamPart } from '../../lib/types.ts'
import {
  type ChatHandler,
  type ChatServer,
  finishChunk,
  openStream,
  sendError,
  sendStream,
  startChatServer,
  textChunk,
  toolChunk,
  usageChunk,
  writeChunk,
} from './chat-server.ts'

const apiKey = 'sk-test-4f8a2c9e1b7d'
const agent = { id: 'agent-1' } as unknown as Agent

function makeRequest(overrides: Partial<ModelRequest> = {}): ModelRequest {
  return {
    agent,
    model: 'test-model',
    system: '',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }],
    signal: new AbortController().signal,
    ...overrides,
  }
}

async function collect(parts: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const collected: StreamPart[] = []
  for await (const part of parts) collected.push(part)
  return collected
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise
  } catch (error) {
    return error
  }
  throw new Error('expected the stream to fail')
}

describe('openai-model adapter', () => {
  let server: ChatServer | undefined

  afterEach(async () => {
    await server?.close()
    server = undefined
  })

  async function serve(handler: ChatHandler, options: Partial<OpenAIAdapterOptions> = {}): Promise<ModelAdapter> {
    server = await startChatServer(handler)
    return createOpenAIAdapter({ baseURL: server.baseURL, apiKey, ...options })
  }

  function answer(chunks: Parameters<typeof sendStream>[1]): ChatHandler {
    return (_request, response) => sendStream(response, chunks)
  }

  describe('streaming', () => {
    it('yields text deltas in arrival order, then a stop finish', async () => {
      const adapter = await serve(answer([textChunk('Hel'), textChunk('lo, '), textChunk('world'), finishChunk('stop')]))
      expect(await collect(adapter.stream(makeRequest()))).to.deep.equal([
        { type: 'text-delta', text: 'Hel' },
        { type: 'text-delta', text: 'lo, ' },
        { type: 'text-delta', text: 'world' },
        { type: 'finish', reason: 'stop' },
      ])
    })

    it('assembles two parallel tool calls split across chunks', async () => {
      const adapter = await serve(
        answer([
          toolChunk([{ index: 0, id: 'call_a', name: 'read_file', arguments: '' }]),
          toolChunk([{ index: 0, arguments: '{"path":' }]),
          toolChunk([{ index: 1, id: 'call_b', name: 'list_dir', arguments: '{"dir"' }]),
          toolChunk([{ index: 0, arguments: '"a.txt"}' }, { index: 1, arguments: ':"src"}' }]),
          finishChunk('tool_calls'),
        ]),
      )
      expect(await collect(adapter.stream(makeRequest()))).to.deep.equal([
        { type: 'tool-call', id: 'call_a', name: 'read_file', arguments: '{"path":"a.txt"}' },
        { type: 'tool-call', id: 'call_b', name: 'list_dir', arguments: '{"dir":"src"}' },
        { type: 'finish', reason: 'tool-calls' },
      ])
    })

    it('streams text before the tool calls of the same response', async () => {
      const adapter = await serve(
        answer([
          textChunk('Let me look.'),
          toolChunk([{ index: 0, id: 'call_a', name: 'read_file', arguments: '{"path":"a.txt"}' }]),
          finishChunk('tool_calls'),
        ]),
      )
      const parts = await collect(adapter.stream(makeRequest()))
      expect(parts.map((part) => part.type)).to.deep.equal(['text-delta', 'tool-call', 'finish'])
    })

    it('sends "{}" for a tool call that streamed no arguments', async () => {
      const adapter = await serve(answer([toolChunk([{ index: 0, id: 'call_a', name: 'now' }]), finishChunk('tool_calls')]))
      const parts = await collect(adapter.stream(makeRequest()))
      expect(parts[0]).to.deep.equal({ type: 'tool-call', id: 'call_a', name: 'now', arguments: '{}' })
    })

    it('reports tool-calls when a server streams calls but says stop', async () => {
      const adapter = await serve(
        answer([toolChunk([{ index: 0, id: 'call_a', name: 'now', arguments: '{}' }]), finishChunk('stop')]),
      )
      const parts = await collect(adapter.stream(makeRequest()))
      expect(parts.at(-1)).to.deep.equal({ type: 'finish', reason: 'tool-calls' })
    })

    it('reports usage from the final usage-only chunk', async () => {
      const adapter = await serve(answer([textChunk('ok'), finishChunk('stop'), usageChunk(12, 3)]))
      const parts = await collect(adapter.stream(makeRequest()))
      expect(parts.at(-1)).to.deep.equal({ type: 'finish', reason: 'stop', usage: { inputTokens: 12, outputTokens: 3 } })
    })

    it('maps a length finish to max-tokens', async () => {
      const adapter = await serve(answer([textChunk('truncat'), finishChunk('length')]))
      const parts = await collect(adapter.stream(makeRequest()))
      expect(parts.at(-1)).to.deep.equal({ type: 'finish', reason: 'max-tokens' })
    })

    it('finishes with stop when the stream ends without a finish reason', async () => {
      const adapter = await serve((_request, response) => sendStream(response, [textChunk('abrupt')], false))
      expect(await collect(adapter.stream(makeRequest()))).to.deep.equal([
        { type: 'text-delta', text: 'abrupt' },
        { type: 'finish', reason: 'stop' },
      ])
    })
  })

  describe('request mapping', () => {
    /** The `messages` the adapter sends for a request holding `messages`. */
    async function sentMessages(messages: ModelRequest['messages']): Promise<unknown> {
      const adapter = await serve(answer([finishChunk('stop')]))
      await collect(adapter.stream(makeRequest({ messages })))
      return server!.requests[0]!.body.messages
    }
    it('posts to <baseURL>/chat/completions with the key as a bearer token', async () => {
      const adapter = await serve(answer([finishChunk('stop')]))
      await collect(adapter.stream(makeRequest()))
      const [request] = server!.requests
      expect(request!.method).to.equal('POST')
      expect(request!.url).to.equal('/v1/chat/completions')
      expect(request!.headers.authorization).to.equal(`Bearer ${apiKey}`)
    })

    it('asks for a stream with usage, for the request model', async () => {
      const adapter = await serve(answer([finishChunk('stop')]), { model: 'fallback-model' })
      await collect(adapter.stream(makeRequest({ model: 'gpt-test' })))
      const { body } = server!.requests[0]!
      expect(body.model).to.equal('gpt-test')
      expect(body.stream).to.equal(true)
      expect(body.stream_options).to.deep.equal({ include_usage: true })
    })

    it('falls back to the configured model when the request names none', async () => {
      const adapter = await serve(answer([finishChunk('stop')]), { model: 'fallback-model' })
      await collect(adapter.stream(makeRequest({ model: '' })))
      expect(server!.requests[0]!.body.model).to.equal('fallback-model')
    })

    it('maps the system prompt, user, assistant and tool messages', async () => {
      const adapter = await serve(answer([finishChunk('stop')]))
      await collect(
        adapter.stream(
          makeRequest({
            system: 'You are terse.',
            messages: [
              { role: 'user', content: [{ type: 'text', text: 'line one' }, { type: 'text', text: 'line two' }] },
              {
                role: 'assistant',
                content: [
                  { type: 'reasoning', text: 'private thoughts' },
                  { type: 'text', text: 'Reading both.' },
                  { type: 'tool-call', id: 'call_a', name: 'read_file', arguments: '{"path":"a.txt"}' },
                  { type: 'tool-call', id: 'call_b', name: 'read_file', arguments: '{"path":"b.txt"}' },
                ],
              },
              { role: 'tool', callId: 'call_a', name: 'read_file', isError: false, content: [{ type: 'text', text: 'A' }] },
              {
                role: 'tool',
                callId: 'call_b',
                name: 'read_file',
                isError: true,
                content: [{ type: 'text', text: 'Error: no such file' }],
              },
              { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] },
            ],
          }),
        ),
      )
      expect(server!.requests[0]!.body.messages).to.deep.equal([
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'line one\nline two' },
        {
          role: 'assistant',
          content: 'Reading both.',
          tool_calls: [
            { id: 'call_a', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.txt"}' } },
            { id: 'call_b', type: 'function', function: { name: 'read_file', arguments: '{"path":"b.txt"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_a', content: 'A' },
        { role: 'tool', tool_call_id: 'call_b', content: 'Error: no such file' },
        { role: 'assistant', content: 'Done.' },
      ])
    })

    it('leaves out a tool call the history holds no result for (a step cancelled between its calls)', async () => {
      const adapter = await serve(answer([finishChunk('stop')]))
      const readFile = (id: string) => ({ type: 'tool-call' as const, id, name: 'read_file', arguments: '{}' })
      await collect(
        adapter.stream(
          makeRequest({
            messages: [
              { role: 'user', content: [{ type: 'text', text: 'go' }] },
              { role: 'assistant', content: [{ type: 'text', text: 'Reading both.' }, readFile('call_a'), readFile('call_b')] },
              { role: 'tool', callId: 'call_a', name: 'read_file', isError: false, content: [{ type: 'text', text: 'A' }] },
              { role: 'user', content: [{ type: 'text', text: 'again' }] },
            ],
          }),
        ),
      )
      expect(server!.requests[0]!.body.messages).to.deep.equal([
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: 'Reading both.',
          tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'read_file', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'call_a', content: 'A' },
        { role: 'user', content: 'again' },
      ])
    })

    it('leaves out an assistant message whose every call went unanswered, and a tool result no call of it precedes', async () => {
      const sent = await sentMessages([
        { role: 'user', content: [{ type: 'text', text: 'go' }] },
        { role: 'assistant', content: [{ type: 'tool-call', id: 'call_a', name: 'now', arguments: '{}' }] },
        { role: 'user', content: [{ type: 'text', text: 'again' }] },
        { role: 'tool', callId: 'call_a', name: 'now', isError: false, content: [{ type: 'text', text: 'late' }] },
      ])
      expect(sent).to.deep.equal([
        { role: 'user', content: 'go' },
        { role: 'user', content: 'again' },
      ])
    })

    it('leaves out a tool result that follows an assistant message without its call', async () => {
      const sent = await sentMessages([
        { role: 'user', content: [{ type: 'text', text: 'go' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Reading.' }, { type: 'tool-call', id: 'call_a', name: 'now', arguments: '{}' }] },
        { role: 'tool', callId: 'call_a', name: 'now', isError: false, content: [{ type: 'text', text: 'A' }] },
        { role: 'tool', callId: 'call_x', name: 'now', isError: false, content: [{ type: 'text', text: 'stray' }] },
      ])
      expect(sent).to.deep.equal([
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: 'Reading.',
          tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'now', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'call_a', content: 'A' },
      ])
    })

    it('omits the system message when the system prompt is empty', async () => {
      const adapter = await serve(answer([finishChunk('stop')]))
      await collect(adapter.stream(makeRequest({ system: '' })))
      expect(server!.requests[0]!.body.messages).to.deep.equal([{ role: 'user', content: 'hello' }])
    })

    it('sends a tool-only assistant message with null content', async () => {
      const adapter = await serve(answer([finishChunk('stop')]))
      await collect(
        adapter.stream(
          makeRequest({
            messages: [
              { role: 'user', content: [{ type: 'text', text: 'go' }] },
              { role: 'assistant', content: [{ type: 'tool-call', id: 'call_a', name: 'now', arguments: '{}' }] },
              { role: 'tool', callId: 'call_a', name: 'now', isError: false, content: [{ type: 'text', text: '12:00' }] },
            ],
          }),
        ),
      )
      const messages = server!.requests[0]!.body.messages as { [key: string]: unknown }[]
      expect(messages[1]).to.deep.equal({
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'now', arguments: '{}' } }],
      })
    })

    it('skips an empty usage-only assistant message', async () => {
      const sent = await sentMessages([
        { role: 'user', content: [{ type: 'text', text: 'first' }] },
        { role: 'assistant', content: [] },
        { role: 'user', content: [{ type: 'text', text: 'second' }] },
      ])
      expect(sent).to.deep.equal([
        { role: 'user', content: 'first' },
        { role: 'user', content: 'second' },
      ])
    })

    it('sends tool schemas as functions', async () => {
      const adapter = await serve(answer([finishChunk('stop')]))
      const parameters = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }
      await collect(adapter.stream(makeRequest({ tools: [{ name: 'read_file', description: 'Reads a file.', parameters }] })))
      expect(server!.requests[0]!.body.tools).to.deep.equal([
        { type: 'function', function: { name: 'read_file', description: 'Reads a file.', parameters } },
      ])
    })

    it('omits tools and max_tokens when the request has none', async () => {
      const adapter = await serve(answer([finishChunk('stop')]))
      await collect(adapter.stream(makeRequest()))
      const { body } = server!.requests[0]!
      expect(body).to.not.have.property('tools')
      expect(body).to.not.have.property('max_tokens')
    })

    it('sends maxTokens as max_tokens', async () => {
      const adapter = await serve(answer([finishChunk('stop')]))
      await collect(adapter.stream(makeRequest({ maxTokens: 256 })))
      expect(server!.requests[0]!.body.max_tokens).to.equal(256)
    })
  })

  describe('failures', () => {
    it('reports an HTTP 401 with the server message and without the key', async () => {
      const adapter = await serve((_request, response) =>
        sendError(response, 401, { error: { message: `invalid api key ${apiKey}`, type: 'invalid_request_error' } }),
      )
      const error = await failure(collect(adapter.stream(makeRequest())))
      expect(error).to.be.instanceOf(ModelRequestError)
      expect((error as ModelRequestError).message).to.equal('model request failed: HTTP 401 (invalid api key ***)')
      expect((error as ModelRequestError).code).to.equal('MODEL_FAILED')
      expect((error as ModelRequestError).status).to.equal(401)
    })

    it('reports an HTTP 500 with a plain-text body', async () => {
      const adapter = await serve((_request, response) => sendError(response, 500, 'upstream exploded'))
      const error = await failure(collect(adapter.stream(makeRequest())))
      expect((error as Error).message).to.equal('model request failed: HTTP 500 (upstream exploded)')
    })

    it('reports an HTTP 500 without a body by its status alone', async () => {
      const adapter = await serve((_request, response) => sendError(response, 500))
      const error = await failure(collect(adapter.stream(makeRequest())))
      expect((error as Error).message).to.equal('model request failed: HTTP 500')
    })

    it('sends the request once, without retries', async () => {
      const adapter = await serve((_request, response) => sendError(response, 500))
      await failure(collect(adapter.stream(makeRequest())))
      expect(server!.requests).to.have.length(1)
    })

    it('reports an error event in the middle of the stream', async () => {
      const adapter = await serve(answer([textChunk('par'), { error: { message: 'overloaded', type: 'server_error' } }]))
      const parts: StreamPart[] = []
      const error = await failure(
        (async () => {
          for await (const part of adapter.stream(makeRequest())) parts.push(part)
        })(),
      )
      expect(parts).to.deep.equal([{ type: 'text-delta', text: 'par' }])
      expect((error as Error).message).to.equal('model request failed: overloaded')
    })

    it('reports a refused connection with its reason', async () => {
      const closed = createServer()
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
      const { port } = closed.address() as AddressInfo
      await new Promise((resolve) => closed.close(resolve))
      const adapter = createOpenAIAdapter({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey })
      const error = await failure(collect(adapter.stream(makeRequest())))
      expect((error as Error).message).to.equal(`model request failed: connect ECONNREFUSED 127.0.0.1:${port}`)
    })

    it('times out when the server never answers', async () => {
      const adapter = await serve(() => {}, { timeoutMs: 50 })
      const error = await failure(collect(adapter.stream(makeRequest())))
      expect(error).to.be.instanceOf(ModelRequestError)
      expect((error as Error).message).to.equal('model request failed: timed out after 50 ms')
    })

    it('times out when the stream stalls after its first chunk', async () => {
      const adapter = await serve(
        (_request, response) => {
          openStream(response)
          writeChunk(response, textChunk('partial'))
        },
        // long enough for the first chunk to arrive on a loaded machine, short enough to wait out
        { timeoutMs: 1000 },
      )
      const parts: StreamPart[] = []
      const error = await failure(
        (async () => {
          for await (const part of adapter.stream(makeRequest())) parts.push(part)
        })(),
      )
      expect(parts).to.deep.equal([{ type: 'text-delta', text: 'partial' }])
      expect((error as Error).message).to.equal('model request failed: timed out after 1000 ms')
    })

    // a timer past 2^31 - 1 ms fires after 1 ms: every request would time out at once
    it('refuses a timeoutMs past 2147483647 with a RangeError', () => {
      expect(() => createOpenAIAdapter({ baseURL: 'http://127.0.0.1:9/v1', apiKey, timeoutMs: 2 ** 31 })).to.throw(
        RangeError,
        'openai adapter timeoutMs must be a positive number of at most 2147483647',
      )
    })

    it('rejects a missing model before sending anything', async () => {
      const adapter = await serve(answer([finishChunk('stop')]))
      const error = await failure(collect(adapter.stream(makeRequest({ model: '' }))))
      expect((error as Error).message).to.equal('model request failed: no model (set the "model" option)')
      expect(server!.requests).to.have.length(0)
    })
  })

  describe('abort', () => {
    it('rejects with the signal reason when aborted mid-stream on a hanging server', async () => {
      const adapter = await serve((_request, response) => {
        openStream(response)
        writeChunk(response, textChunk('partial'))
      })
      const controller = new AbortController()
      const reason = new Error('user cancelled')
      const parts: StreamPart[] = []
      const error = await failure(
        (async () => {
          for await (const part of adapter.stream(makeRequest({ signal: controller.signal }))) {
            parts.push(part)
            controller.abort(reason)
          }
        })(),
      )
      expect(parts).to.deep.equal([{ type: 'text-delta', text: 'partial' }])
      expect(error).to.equal(reason)
    })

    it('rejects with the signal reason when aborted while waiting for the next chunk', async () => {
      const adapter = await serve((_request, response) => {
        openStream(response)
        writeChunk(response, textChunk('partial'))
      })
      const controller = new AbortController()
      const reason = new Error('user cancelled')
      const parts = adapter.stream(makeRequest({ signal: controller.signal }))[Symbol.asyncIterator]()
      expect(await parts.next()).to.deep.equal({ done: false, value: { type: 'text-delta', text: 'partial' } })
      const waiting = failure(parts.next())
      controller.abort(reason)
      expect(await waiting).to.equal(reason)
    })

    it('rejects while waiting for the response headers', async () => {
      const adapter = await serve(() => {})
      const controller = new AbortController()
      const reason = new Error('user cancelled')
      const pending = failure(collect(adapter.stream(makeRequest({ signal: controller.signal }))))
      await server!.nextRequest()
      controller.abort(reason)
      expect(await pending).to.equal(reason)
    })

    it('rejects with an AbortError when the reason is not an Error', async () => {
      const adapter = await serve(() => {})
      const controller = new AbortController()
      const pending = failure(collect(adapter.stream(makeRequest({ signal: controller.signal }))))
      await server!.nextRequest()
      controller.abort('stop please')
      const error = (await pending) as Error
      expect(error.name).to.equal('AbortError')
      expect(error.message).to.equal('model request aborted')
    })

    it('sends nothing when the signal is already aborted', async () => {
      const adapter = await serve(answer([finishChunk('stop')]))
      const reason = new Error('too late')
      const error = await failure(collect(adapter.stream(makeRequest({ signal: AbortSignal.abort(reason) }))))
      expect(error).to.equal(reason)
      expect(server!.requests).to.have.length(0)
    })

    it('closes the connection when the consumer stops reading', async () => {
      let closed!: () => void
      const connectionClosed = new Promise<void>((resolve) => (closed = resolve))
      const adapter = await serve((_request, response) => {
        response.on('close', closed)
        openStream(response)
        writeChunk(response, textChunk('partial'))
      })
      for await (const part of adapter.stream(makeRequest())) {
        expect(part).to.deep.equal({ type: 'text-delta', text: 'partial' })
        break
      }
      await connectionClosed
    })
  })
})
