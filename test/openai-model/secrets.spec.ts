import { expect } from 'chai'
import { Context } from 'cordis'
import sinon from 'sinon'
import type { Agent, ModelRequest, StreamPart } from '../../lib/types.ts'
import { Host } from '../../plugins/host/index.ts'
import { InProcessRun } from '../../plugins/inprocess-run/index.ts'
import { createOpenAIAdapter } from '../../plugins/openai-model/adapter.ts'
import { OpenAIModel } from '../../plugins/openai-model/index.ts'
import { type ChatHandler, type ChatServer, openStream, startChatServer } from './chat-server.ts'

const apiKey = 'sk-secret-test-8e2f7a'
const password = 'hunter2-pass'

function makeRequest(): ModelRequest {
  return {
    agent: { id: 'agent-1' } as unknown as Agent,
    model: 'test-model',
    system: '',
    messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }],
    signal: new AbortController().signal,
  }
}

async function failure(parts: AsyncIterable<StreamPart>): Promise<Error> {
  try {
    for await (const _ of parts);
  } catch (error) {
    return error as Error
  }
  throw new Error('expected the stream to fail')
}

/** A stream whose one chunk is not JSON and echoes the key and a credentialed URL. */
const malformedChunk: ChatHandler = (_request, response) => {
  openStream(response)
  response.write(`data: {not json ${apiKey} http://admin:${password}@proxy.local/\n\n`)
  response.end()
}

function withCredentials(baseURL: string): string {
  return baseURL.replace('http://', `http://admin:${password}@`)
}

describe('openai-model: secrets stay out of errors and logs', () => {
  let server: ChatServer | undefined
  let consoleSpies: sinon.SinonSpy[] = []

  beforeEach(() => {
    consoleSpies = (['error', 'warn', 'info', 'log', 'debug'] as const).map((level) => sinon.spy(console, level))
  })

  afterEach(async () => {
    sinon.restore()
    await server?.close()
    server = undefined
  })

  function consoleCalls(): number {
    return consoleSpies.reduce((total, spy) => total + spy.callCount, 0)
  }

  it('redacts credentials in the baseURL from the error a request fails with', async () => {
    server = await startChatServer(malformedChunk)
    const adapter = createOpenAIAdapter({ baseURL: withCredentials(server.baseURL), apiKey, logger: console })
    const error = await failure(adapter.stream(makeRequest()))
    const port = new URL(server.baseURL).port
    expect(error.message).to.equal(
      `model request failed: Request cannot be constructed from a URL that includes credentials: http://***@127.0.0.1:${port}/v1/chat/completions`,
    )
  })

  it('routes the client’s complaint about a malformed chunk through the given logger, redacted', async () => {
    server = await startChatServer(malformedChunk)
    const lines: string[] = []
    const record = (text: string) => void lines.push(text)
    const adapter = createOpenAIAdapter({
      baseURL: server.baseURL,
      apiKey,
      logger: { error: record, warn: record, info: record, debug: record },
    })
    const error = await failure(adapter.stream(makeRequest()))
    expect(consoleCalls()).to.equal(0)
    expect(lines).to.deep.equal([
      'openai client: Could not parse message into JSON: {not json *** http://***@proxy.local/',
      "openai client: From chunk: [ 'data: {not json *** http://***@proxy.local/' ]",
    ])
    expect(error.message).to.equal('model request failed: the server sent a stream chunk that is not JSON')
  })

  it('reports a malformed chunk without quoting it (the parser would quote a fragment of the key)', async () => {
    server = await startChatServer((_request, response) => {
      openStream(response)
      response.write(`data: x${apiKey}\n\n`)
      response.end()
    })
    const adapter = createOpenAIAdapter({ baseURL: server.baseURL, apiKey, logger: { error() {}, warn() {}, info() {}, debug() {} } })
    const error = await failure(adapter.stream(makeRequest()))
    expect(error.message).to.equal('model request failed: the server sent a stream chunk that is not JSON')
  })

  describe('through the plugin', () => {
    let root: Context
    let host: ReturnType<Context['plugin']>

    beforeEach(async () => {
      root = new Context()
      host = root.plugin(Host, { maxSteps: 8 } as Host.Config)
      await host
      await root.plugin(InProcessRun)
    })

    afterEach(async () => {
      await host.dispose()
    })

    async function load(baseURL: string): Promise<void> {
      await root.plugin(OpenAIModel, { baseURL, apiKey, apiKeyEnv: 'SUBAGENT_INPROCESS_TEST_UNSET_KEY' } as OpenAIModel.Config)
    }

    it('keeps baseURL credentials out of a child’s diagnostic', async () => {
      server = await startChatServer(malformedChunk)
      await load(withCredentials(server.baseURL))
      const { agent: parent } = await root.agents.create({ agentOptions: { provider: 'openai', model: 'test-model' } })
      const run = await root.inprocessRun.spawn({ parent, prompt: 'do it', signal: new AbortController().signal })
      const result = await run.result
      await run.dispose()
      expect(result.stopReason).to.equal('error')
      expect(result.diagnostic).to.include('http://***@127.0.0.1:')
      expect(result.diagnostic).not.to.include(password)
      expect(result.diagnostic).not.to.include('admin')
    })

    it('writes the client’s log lines to the host logger, never to the console', async () => {
      server = await startChatServer(malformedChunk)
      await load(server.baseURL)
      const { agent } = await root.agents.create({ agentOptions: { provider: 'openai', model: 'test-model' } })
      agent.followup('hello')
      await agent.whenIdle()
      expect(consoleCalls()).to.equal(0)
      const logged = root.logger.buffer.filter((message) => message.name === 'openai-model').map((message) => message.args.join(' '))
      expect(logged).to.deep.equal([
        'openai client: Could not parse message into JSON: {not json *** http://***@proxy.local/',
        "openai client: From chunk: [ 'data: {not json *** http://***@proxy.local/' ]",
      ])
    })
  })
})
