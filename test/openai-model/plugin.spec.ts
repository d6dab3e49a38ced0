import { expect } from 'chai'
import { Context } from 'cordis'
import type { Agent, SessionEvent } from '../../lib/types.ts'
import { Host } from '../../plugins/host/index.ts'
import { OpenAIModel } from '../../plugins/openai-model/index.ts'
import {
  type ChatHandler,
  type ChatServer,
  finishChunk,
  openStream,
  sendStream,
  startChatServer,
  textChunk,
  usageChunk,
  writeChunk,
} from './chat-server.ts'

const apiKey = 'sk-plugin-test-91c3'
// a variable no environment sets, so the keyless path is deterministic
const unsetEnv = 'SUBAGENT_INPROCESS_TEST_UNSET_KEY'
const keyEnv = 'SUBAGENT_INPROCESS_TEST_KEY'

function dataOf(agent: Agent, type: string): unknown[] {
  return agent.session.events.filter((event) => event.type === type).map((event) => event.data)
}

describe('OpenAIModel plugin', () => {
  let root: Context
  let host: ReturnType<Context['plugin']>
  let server: ChatServer | undefined

  beforeEach(async () => {
    // the caller's environment must not pick the endpoint of a test
    delete process.env.OPENAI_BASE_URL
    root = new Context()
    host = root.plugin(Host, { maxSteps: 8 })
    await host
  })

  afterEach(async () => {
    delete process.env[keyEnv]
    delete process.env.OPENAI_BASE_URL
    // unloading the host disposes every agent a test created
    await host.dispose()
    await server?.close()
    server = undefined
  })

  async function serve(handler: ChatHandler): Promise<string> {
    server = await startChatServer(handler)
    return server.baseURL
  }

  function config(overrides: Partial<OpenAIModel.Config>): OpenAIModel.Config {
    return { apiKeyEnv: unsetEnv, ...overrides } as OpenAIModel.Config
  }

  async function runTurn(provider: string, text: string): Promise<Agent> {
    const { agent } = await root.agents.create({ agentOptions: { provider, model: 'test-model' } })
    agent.followup(text)
    await agent.whenIdle()
    return agent
  }

  it('routes provider "openai" to its adapter and completes a turn', async () => {
    const baseURL = await serve((_request, response) =>
      sendStream(response, [textChunk('Hi'), textChunk(' there'), finishChunk('stop'), usageChunk(5, 2)]),
    )
    await root.plugin(OpenAIModel, config({ baseURL, apiKey }))
    expect(root.models.resolve('openai')).to.not.equal(undefined)
    const agent = await runTurn('openai', 'hello')
    expect(dataOf(agent, 'assistant/message')).to.deep.equal([
      { turn: 1, step: 1, content: [{ type: 'text', text: 'Hi there' }], usage: { inputTokens: 5, outputTokens: 2 } },
    ])
    expect(dataOf(agent, 'turn/end')).to.deep.equal([{ turn: 1, reason: { kind: 'completed' } }])
    expect(server!.requests[0]!.body.messages).to.deep.equal([{ role: 'user', content: 'hello' }])
  })

  it('registers under the configured provider name', async () => {
    const baseURL = await serve((_request, response) => sendStream(response, [finishChunk('stop')]))
    await root.plugin(OpenAIModel, config({ baseURL, apiKey, provider: 'deepseek' }))
    expect(root.models.resolve('deepseek')).to.not.equal(undefined)
    expect(root.models.resolve('openai')).to.equal(undefined)
  })

  it('reads the key from the variable named by apiKeyEnv', async () => {
    const baseURL = await serve((_request, response) => sendStream(response, [finishChunk('stop')]))
    process.env[keyEnv] = apiKey
    await root.plugin(OpenAIModel, config({ baseURL, apiKeyEnv: keyEnv }))
    await runTurn('openai', 'hello')
    expect(server!.requests[0]!.headers.authorization).to.equal(`Bearer ${apiKey}`)
  })

  it('ends the turn with the missing-key error when no key is configured', async () => {
    await root.plugin(OpenAIModel, config({}))
    const agent = await runTurn('openai', 'hello')
    expect(dataOf(agent, 'turn/end')).to.deep.equal([
      {
        turn: 1,
        reason: {
          kind: 'error',
          error: { message: `model request failed: no API key (set ${unsetEnv})`, code: 'MODEL_FAILED' },
        },
      },
    ])
  })

  it('sends requests to OPENAI_BASE_URL when the config names no baseURL', async () => {
    process.env.OPENAI_BASE_URL = await serve((_request, response) => sendStream(response, [textChunk('env'), finishChunk('stop')]))
    await root.plugin(OpenAIModel, config({ apiKey }))
    const agent = await runTurn('openai', 'hello')
    expect(dataOf(agent, 'turn/end')).to.deep.equal([{ turn: 1, reason: { kind: 'completed' } }])
    expect(server!.requests).to.have.length(1)
  })

  it('prefers the baseURL of the config over OPENAI_BASE_URL', async () => {
    const baseURL = await serve((_request, response) => sendStream(response, [finishChunk('stop')]))
    // nothing listens on the discard port: a request sent there would end the turn with an error
    process.env.OPENAI_BASE_URL = 'http://127.0.0.1:9/v1'
    await root.plugin(OpenAIModel, config({ baseURL, apiKey }))
    const agent = await runTurn('openai', 'hello')
    expect(dataOf(agent, 'turn/end')).to.deep.equal([{ turn: 1, reason: { kind: 'completed' } }])
    expect(server!.requests).to.have.length(1)
  })

  it('talks to a keyless server at a non-default baseURL without sending an Authorization header', async () => {
    const baseURL = await serve((_request, response) => sendStream(response, [textChunk('local'), finishChunk('stop')]))
    await root.plugin(OpenAIModel, config({ baseURL }))
    const agent = await runTurn('openai', 'hello')
    expect(dataOf(agent, 'turn/end')).to.deep.equal([{ turn: 1, reason: { kind: 'completed' } }])
    expect(server!.requests[0]!.headers).not.to.have.property('authorization')
  })

  it('talks to a keyless server named by OPENAI_BASE_URL', async () => {
    process.env.OPENAI_BASE_URL = await serve((_request, response) => sendStream(response, [finishChunk('stop')]))
    await root.plugin(OpenAIModel, config({}))
    const agent = await runTurn('openai', 'hello')
    expect(dataOf(agent, 'turn/end')).to.deep.equal([{ turn: 1, reason: { kind: 'completed' } }])
    expect(server!.requests[0]!.headers).not.to.have.property('authorization')
  })

  it('ends the turn aborted, keeping the streamed text, when the agent is cancelled mid-stream', async () => {
    const baseURL = await serve((_request, response) => {
      openStream(response)
      writeChunk(response, textChunk('partial'))
    })
    await root.plugin(OpenAIModel, config({ baseURL, apiKey }))
    const { agent } = await root.agents.create({ agentOptions: { provider: 'openai', model: 'test-model' } })
    const streamed = new Promise<void>((resolve) => {
      const off = root.on('session/event', (_session: unknown, event: SessionEvent) => {
        if (event.type !== 'assistant/delta') return
        off()
        resolve()
      })
    })
    agent.followup('hello')
    await streamed
    agent.cancel({ kind: 'user' })
    await agent.whenIdle()
    expect(dataOf(agent, 'assistant/message')).to.deep.equal([
      { turn: 1, step: 1, content: [{ type: 'text', text: 'partial' }], interrupted: true },
    ])
    expect(dataOf(agent, 'turn/end')).to.deep.equal([{ turn: 1, reason: { kind: 'aborted', cause: { kind: 'user' } } }])
  })

  it('removes the provider when the plugin is disposed', async () => {
    const fiber = root.plugin(OpenAIModel, config({ baseURL: 'http://127.0.0.1:9/v1', apiKey }))
    await fiber
    expect(root.models.resolve('openai')).to.not.equal(undefined)
    await fiber.dispose()
    expect(root.models.resolve('openai')).to.equal(undefined)
  })

  // a timer past 2^31 - 1 ms fires after 1 ms: every request would time out at once
  it('rejects a config with a timeout past 2147483647 ms', async () => {
    let rejected: unknown
    try {
      await root.plugin(OpenAIModel, config({ apiKey, timeoutMs: 2 ** 31 }))
    } catch (error) {
      rejected = error
    }
    expect(String(rejected)).to.include('timeoutMs').and.include('2147483647')
    expect(root.models.resolve('openai')).to.equal(undefined)
  })

  it('rejects a config with a zero timeout', async () => {
    let rejected: unknown
    try {
      await root.plugin(OpenAIModel, config({ apiKey, timeoutMs: 0 }))
    } catch (error) {
      rejected = error
    }
    expect(String(rejected)).to.match(/timeoutMs/)
    expect(root.models.resolve('openai')).to.equal(undefined)
  })
})
