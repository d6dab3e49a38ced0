import { expect } from 'chai'
import type { Agent, ModelRequest, StreamPart } from '../../lib/types.ts'
import { lastOf, nextEvent, runTurn, scene, typesOf } from '../support/scene.ts'

const echo = {
  name: 'echo',
  description: 'Echoes its text.',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  execute: (args: { text: string }) => `echo: ${args.text}`,
}


describe('agent loop: completed turns (SPEC §1.4)', () => {
  it('writes turn/start, user/message, step/start, delta, message, turn/end in that order', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push({ text: 'hi there' })
    await runTurn(agent)
    expect(agent.session.events.map(({ type, data }) => ({ type, data }))).to.deep.equal([
      { type: 'turn/start', data: { turn: 1, trigger: 'message' } },
      { type: 'user/message', data: { content: [{ type: 'text', text: 'hello' }], source: { kind: 'user' } } },
      { type: 'step/start', data: { turn: 1, step: 1 } },
      { type: 'assistant/delta', data: { turn: 1, step: 1, text: 'hi there' } },
      { type: 'assistant/message', data: { turn: 1, step: 1, content: [{ type: 'text', text: 'hi there' }] } },
      { type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } },
    ])
  })

  it('appends one assistant/delta per streamed text part and joins them in the message', async () => {
    const s = await scene()
    s.scripted.push({ deltas: ['one ', 'two'] })
    const { agent } = await s.create()
    await runTurn(agent)
    expect(agent.session.events.filter((event) => event.type === 'assistant/delta').map((event) => event.data)).to.deep.equal([
      { turn: 1, step: 1, text: 'one ' },
      { turn: 1, step: 1, text: 'two' },
    ])
    expect(lastOf(agent, 'assistant/message')).to.deep.equal({ turn: 1, step: 1, content: [{ type: 'text', text: 'one two' }] })
  })

  it('builds the step from the part fields it checked, reading each once', async () => {
    const s = await scene()
    const reads: Record<string, number> = {}
    /** A field whose getter answers `first` once, then a function (not JSON) on every later read. */
    function shifty<T extends object>(target: T, key: string, first: unknown): T {
      return Object.defineProperty(target, key, {
        enumerable: true,
        get: () => ((reads[key] = (reads[key] ?? 0) + 1) === 1 ? first : () => 'changed'),
      })
    }
    let calls = 0
    const unregister = s.root.models.register('shifty', {
      async *stream(): AsyncIterable<StreamPart> {
        // the second step (after the tool ran) only finishes
        if (calls++ === 0) {
          yield shifty({ type: 'text-delta' }, 'text', 'steady') as StreamPart
          yield shifty({ type: 'tool-call', id: 'c1', arguments: '{}' }, 'name', 'probe') as StreamPart
          yield { type: 'finish', reason: 'tool-calls', usage: shifty({ inputTokens: 5 }, 'outputTokens', 2) } as StreamPart
        } else yield { type: 'finish', reason: 'stop' }
      },
    })
    s.root.tools.register({ name: 'probe', description: 'probe', parameters: { type: 'object' }, execute: () => 'done' })
    const { agent } = await s.create({ agentOptions: { provider: 'shifty' } })
    await runTurn(agent)
    const message = agent.session.events.find((event) => event.type === 'assistant/message')
    expect(message?.data).to.deep.equal({
      turn: 1,
      step: 1,
      content: [
        { type: 'text', text: 'steady' },
        { type: 'tool-call', id: 'c1', name: 'probe', arguments: '{}' },
      ],
      usage: { inputTokens: 5, outputTokens: 2 },
    })
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'completed' } })
    expect(reads).to.deep.equal({ text: 1, name: 1, outputTokens: 1 })
    unregister()
  })

  it('puts the finish usage on the assistant message', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push({ text: 'counted', usage: { inputTokens: 12, outputTokens: 3 } })
    await runTurn(agent)
    expect(lastOf(agent, 'assistant/message')).to.deep.equal({
      turn: 1,
      step: 1,
      content: [{ type: 'text', text: 'counted' }],
      usage: { inputTokens: 12, outputTokens: 3 },
    })
  })

  it('runs tool calls in model order, records their results and feeds them back on the next step', async () => {
    const s = await scene()
    s.root.tools.register(echo)
    const { agent } = await s.create()
    s.scripted.push(
      {
        toolCalls: [
          { id: 'c1', name: 'echo', arguments: '{"text":"a"}' },
          { id: 'c2', name: 'echo', arguments: { text: 'b' } },
        ],
      },
      { text: 'done' },
    )
    await runTurn(agent)
    expect(agent.session.events.filter((event) => event.type === 'tool/result').map((event) => event.data)).to.deep.equal([
      { turn: 1, step: 1, callId: 'c1', name: 'echo', isError: false, content: [{ type: 'text', text: 'echo: a' }] },
      { turn: 1, step: 1, callId: 'c2', name: 'echo', isError: false, content: [{ type: 'text', text: 'echo: b' }] },
    ])
    expect(s.scripted.requests[1].messages).to.deep.equal([
      { role: 'user', content: [{ type: 'text', text: 'hello' }] },
      {
        role: 'assistant',
        content: [
          { type: 'tool-call', id: 'c1', name: 'echo', arguments: '{"text":"a"}' },
          { type: 'tool-call', id: 'c2', name: 'echo', arguments: '{"text":"b"}' },
        ],
      },
      { role: 'tool', callId: 'c1', name: 'echo', isError: false, content: [{ type: 'text', text: 'echo: a' }] },
      { role: 'tool', callId: 'c2', name: 'echo', isError: false, content: [{ type: 'text', text: 'echo: b' }] },
    ])
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'completed' } })
  })

  it('records a step’s text before its tool calls, in model order, in one assistant message', async () => {
    const s = await scene()
    s.root.tools.register(echo)
    const { agent } = await s.create()
    s.scripted.push(
      {
        text: 'calling',
        toolCalls: [
          { id: 'c1', name: 'echo', arguments: '{"text":"a"}' },
          { id: 'c2', name: 'echo', arguments: '{"text":"b"}' },
        ],
      },
      { text: 'done' },
    )
    await runTurn(agent)
    const first = agent.session.events.find((event) => event.type === 'assistant/message')?.data as { content: unknown[] }
    expect(first.content).to.deep.equal([
      { type: 'text', text: 'calling' },
      { type: 'tool-call', id: 'c1', name: 'echo', arguments: '{"text":"a"}' },
      { type: 'tool-call', id: 'c2', name: 'echo', arguments: '{"text":"b"}' },
    ])
  })

  it('feeds a failed tool call back as an error result and keeps going', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push({ toolCalls: [{ id: 'c1', name: 'nope', arguments: '{}' }] }, { text: 'recovered' })
    await runTurn(agent)
    expect(s.scripted.requests[1].messages.at(-1)).to.deep.equal({
      role: 'tool',
      callId: 'c1',
      name: 'nope',
      isError: true,
      content: [{ type: 'text', text: 'Error: unknown tool "nope"' }],
    })
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'completed' } })
  })

  it('carries earlier turns into the next request', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push({ text: 'first answer' }, { text: 'second answer' })
    await runTurn(agent, 'first')
    await runTurn(agent, 'second')
    expect(s.scripted.requests[1].messages).to.deep.equal([
      { role: 'user', content: [{ type: 'text', text: 'first' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'first answer' }] },
      { role: 'user', content: [{ type: 'text', text: 'second' }] },
    ])
  })
})

describe('agent loop: the model request (SPEC §1.4 step 3)', () => {
  it('omits tools, rather than sending [], when the agent sees none', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push({ text: 'ok' })
    await runTurn(agent)
    expect(Object.hasOwn(s.scripted.requests[0], 'tools')).to.equal(false)
  })

  it('sends the schemas the agent sees, sorted by name', async () => {
    const s = await scene()
    s.root.tools.register({ ...echo, name: 'zeta' })
    const { agent } = await s.create()
    agent.ctx.tools.register({ ...echo, name: 'alpha' })
    s.scripted.push({ text: 'ok' })
    await runTurn(agent)
    expect(s.scripted.requests[0].tools?.map((tool) => tool.name)).to.deep.equal(['alpha', 'zeta'])
    expect(s.scripted.requests[0].tools?.[0]).to.deep.equal({ name: 'alpha', description: echo.description, parameters: echo.parameters })
  })

  it('passes maxTokens when set and leaves it out otherwise', async () => {
    const s = await scene()
    const capped = await s.create({ agentOptions: { maxTokens: 256 } })
    const open = await s.create()
    s.scripted.push({ text: 'a' }, { text: 'b' })
    await runTurn(capped.agent)
    await runTurn(open.agent)
    expect(s.scripted.requests[0].maxTokens).to.equal(256)
    expect(Object.hasOwn(s.scripted.requests[1], 'maxTokens')).to.equal(false)
  })

  it('sends the agent, its model, the assembled system prompt and the turn signal', async () => {
    const s = await scene()
    s.root.systemPrompt.section({ name: 'persona', order: 0, text: 'You are terse.' })
    const { agent } = await s.create({ agentOptions: { model: 'big' } })
    s.scripted.push({ text: 'ok' })
    await runTurn(agent)
    const request: ModelRequest = s.scripted.requests[0]
    expect(request.agent).to.equal(agent)
    expect(request.model).to.equal('big')
    expect(request.system).to.equal('You are terse.')
    expect(request.signal).to.be.an.instanceOf(AbortSignal)
    expect(request.signal.aborted).to.equal(false)
  })
})

describe('agent loop: max-tokens (SPEC §1.4 step 4)', () => {
  it('ends the turn max-tokens and drops the truncated tool calls without running them', async () => {
    const s = await scene()
    const body = { ...echo, execute: () => expect.fail('a dropped tool call ran') }
    s.root.tools.register(body)
    const { agent } = await s.create()
    s.scripted.push({ text: 'cut', toolCalls: [{ name: 'echo', arguments: '{"te' }], finish: 'max-tokens' })
    await runTurn(agent)
    expect(lastOf(agent, 'assistant/message')).to.deep.equal({ turn: 1, step: 1, content: [{ type: 'text', text: 'cut' }] })
    expect(typesOf(agent)).to.not.include('tool/result')
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'max-tokens' } })
  })

  it('leaves an empty, usage-only message when a tool-only step is truncated', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push({
      toolCalls: [{ name: 'echo', arguments: '{}' }],
      finish: 'max-tokens',
      usage: { inputTokens: 5, outputTokens: 9 },
    })
    await runTurn(agent)
    expect(lastOf(agent, 'assistant/message')).to.deep.equal({
      turn: 1,
      step: 1,
      content: [],
      usage: { inputTokens: 5, outputTokens: 9 },
    })
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'max-tokens' } })
  })

  it('does not send an empty message to the model on the next turn', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push({ toolCalls: [{ name: 'echo', arguments: '{}' }], finish: 'max-tokens' }, { text: 'ok' })
    await runTurn(agent, 'first')
    await runTurn(agent, 'second')
    expect(s.scripted.requests[1].messages.map((message) => message.role)).to.deep.equal(['user', 'user'])
  })
})

describe('agent loop: aborted (SPEC §1.4 step 4)', () => {
  /** An agent whose first turn has streamed `partial` and waits on its model. */
  async function streamingTurn() {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push('hang')
    const streaming = nextEvent(s.root, agent, 'assistant/delta')
    agent.followup('hello')
    await streaming
    return { s, agent }
  }

  it('keeps the streamed text as an interrupted message and ends aborted with the cause', async () => {
    const { agent } = await streamingTurn()
    agent.cancel({ kind: 'user' })
    await agent.whenIdle()
    expect(agent.session.events.slice(-3).map(({ type, data }) => ({ type, data }))).to.deep.equal([
      { type: 'assistant/delta', data: { turn: 1, step: 1, text: 'partial' } },
      { type: 'assistant/message', data: { turn: 1, step: 1, content: [{ type: 'text', text: 'partial' }], interrupted: true } },
      { type: 'turn/end', data: { turn: 1, reason: { kind: 'aborted', cause: { kind: 'user' } } } },
    ])
  })

  it('reports a hook cause with its reason', async () => {
    const { agent } = await streamingTurn()
    agent.cancel({ kind: 'hook', reason: 'budget spent' })
    await agent.whenIdle()
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'aborted', cause: { kind: 'hook', reason: 'budget spent' } } })
  })

  it('throws a TypeError for a cause without a string kind, leaving the turn running', async () => {
    const { agent } = await streamingTurn()
    const cause = { kind: 7 } as unknown as { kind: 'user' }
    expect(() => agent.cancel(cause)).to.throw(TypeError, 'agent cancel cause kind must be a string, got number')
    expect(agent.status).to.equal('running')
    agent.cancel({ kind: 'user' })
    await agent.whenIdle()
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'aborted', cause: { kind: 'user' } } })
  })

  it('throws a TypeError naming the cause for a cause that is not JSON data, leaving the turn running', async () => {
    const { agent } = await streamingTurn()
    const cause = { kind: 'hook', reason: new Date(0) } as unknown as { kind: 'hook'; reason: string }
    expect(() => agent.cancel(cause)).to.throw(TypeError, 'agent cancel cause must be JSON data: value.reason is not JSON data (non-plain object)')
    expect(agent.status).to.equal('running')
    agent.cancel({ kind: 'user' })
    await agent.whenIdle()
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'aborted', cause: { kind: 'user' } } })
  })

  it('ends the turn with a copy of the cause, so a later edit of the caller\'s object changes nothing', async () => {
    const { agent } = await streamingTurn()
    const cause: { kind: 'hook'; reason: unknown } = { kind: 'hook', reason: 'budget spent' }
    agent.cancel(cause as { kind: 'hook'; reason: string })
    cause.reason = new Date(0)
    await agent.whenIdle()
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'aborted', cause: { kind: 'hook', reason: 'budget spent' } } })
  })

  it('aborts the signal the model request carries', async () => {
    const { s, agent } = await streamingTurn()
    agent.cancel({ kind: 'parent' })
    expect(s.scripted.requests[0].signal.aborted).to.equal(true)
    await agent.whenIdle()
  })

  it('ends aborted when cancelled while a tool runs, without another model request', async () => {
    const s = await scene()
    let started!: () => void
    const running = new Promise<void>((resolve) => (started = resolve))
    s.root.tools.register({
      name: 'slow',
      description: 'Waits for its signal.',
      parameters: { type: 'object' },
      execute: (_args: never, exec: { signal: AbortSignal }) =>
        new Promise((_resolve, reject) => {
          exec.signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true })
          started()
        }),
    })
    const { agent } = await s.create()
    s.scripted.push({ toolCalls: [{ id: 'c1', name: 'slow', arguments: '{}' }] })
    agent.followup('hello')
    await running
    agent.cancel({ kind: 'user' })
    await agent.whenIdle()
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'aborted', cause: { kind: 'user' } } })
    expect(s.scripted.requests).to.have.length(1)
  })
})

describe('agent loop: errors (SPEC §1.4)', () => {
  it('ends the turn error with the message of an adapter that throws', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push(new Error('upstream 503'))
    await runTurn(agent)
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'error', error: { message: 'upstream 503' } } })
  })

  it('keeps the code of an adapter error that has one', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.scripted.push(Object.assign(new Error('slow down'), { code: 'RATE_LIMITED' }))
    await runTurn(agent)
    expect(lastOf(agent, 'turn/end')).to.deep.equal({
      turn: 1,
      reason: { kind: 'error', error: { message: 'slow down', code: 'RATE_LIMITED' } },
    })
  })

  it('ends the turn error when an adapter fails mid-stream', async () => {
    const s = await scene()
    const unregister = s.root.models.register('flaky', {
      async *stream(): AsyncIterable<StreamPart> {
        yield { type: 'text-delta', text: 'half' }
        throw new Error('connection reset')
      },
    })
    const { agent } = await s.create({ agentOptions: { provider: 'flaky' } })
    await runTurn(agent)
    expect(lastOf(agent, 'assistant/delta')).to.deep.equal({ turn: 1, step: 1, text: 'half' })
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'error', error: { message: 'connection reset' } } })
    unregister()
  })

  it('ends the turn error NO_MODEL when the agent has no provider', async () => {
    const s = await scene()
    const handle = await s.root.agents.create({ sessionId: 'bare' })
    await runTurn(handle.agent)
    expect(lastOf(handle.agent, 'turn/end')).to.deep.equal({
      turn: 1,
      reason: { kind: 'error', error: { message: 'agent "bare" has no model provider', code: 'NO_MODEL' } },
    })
    await handle.dispose()
  })

  it('ends the turn error NO_MODEL when the agent has no model', async () => {
    const s = await scene()
    const handle = await s.root.agents.create({ sessionId: 'nomodel', agentOptions: { provider: 'scripted' } })
    await runTurn(handle.agent)
    expect(lastOf(handle.agent, 'turn/end')).to.deep.equal({
      turn: 1,
      reason: { kind: 'error', error: { message: 'agent "nomodel" has no model', code: 'NO_MODEL' } },
    })
    await handle.dispose()
  })

  it('ends the turn error NO_MODEL when no adapter serves the provider', async () => {
    const s = await scene()
    const { agent } = await s.create({ agentOptions: { provider: 'nowhere' } })
    await runTurn(agent)
    expect(lastOf(agent, 'turn/end')).to.deep.equal({
      turn: 1,
      reason: { kind: 'error', error: { message: 'no model adapter for provider "nowhere"', code: 'NO_MODEL' } },
    })
  })

  it('ends the turn error MAX_STEPS once maxSteps steps all asked for tools', async () => {
    const s = await scene()
    s.root.tools.register(echo)
    const { agent } = await s.create({ agentOptions: { maxSteps: 2 } })
    const call = { toolCalls: [{ name: 'echo', arguments: '{"text":"again"}' }] }
    s.scripted.push(call, call, { text: 'never asked' })
    await runTurn(agent)
    expect(lastOf(agent, 'turn/end')).to.deep.equal({
      turn: 1,
      reason: { kind: 'error', error: { message: 'turn exceeded maxSteps 2', code: 'MAX_STEPS' } },
    })
    expect(s.scripted.requests).to.have.length(2)
    expect(s.scripted.pending).to.equal(1)
  })

  it('takes the default maxSteps from the host config', async () => {
    const s = await scene({ maxSteps: 1 })
    const { agent } = await s.create()
    s.scripted.push({ toolCalls: [{ name: 'echo', arguments: '{}' }] })
    await runTurn(agent)
    expect(lastOf(agent, 'turn/end')).to.deep.equal({
      turn: 1,
      reason: { kind: 'error', error: { message: 'turn exceeded maxSteps 1', code: 'MAX_STEPS' } },
    })
  })

  it('ends the turn error when a system-prompt/assemble listener throws', async () => {
    const s = await scene()
    const { agent } = await s.create()
    agent.ctx.on('system-prompt/assemble', () => {
      throw new Error('prompt broke')
    })
    await runTurn(agent)
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'error', error: { message: 'prompt broke' } } })
    expect(s.scripted.requests).to.have.length(0)
  })
})

describe('agent loop: agent/pre-step (SPEC §1.4 step 2)', () => {
  it('ends the turn blocked with no model call when a listener rejects', async () => {
    const s = await scene()
    const { agent } = await s.create()
    agent.ctx.on('agent/pre-step', () => ({ kind: 'reject' }))
    await runTurn(agent)
    expect(typesOf(agent)).to.deep.equal(['turn/start', 'user/message', 'turn/end'])
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'blocked' } })
    expect(s.scripted.requests).to.have.length(0)
  })

  it('enters the step when listeners defer to next()', async () => {
    const s = await scene()
    const { agent } = await s.create()
    const seen: unknown[] = []
    agent.ctx.on('agent/pre-step', (subject, info, next) => {
      seen.push({ subject: subject === agent, ...info })
      return next()
    })
    s.scripted.push({ text: 'ok' })
    await runTurn(agent)
    expect(seen).to.deep.equal([{ subject: true, turn: 1, step: 1 }])
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'completed' } })
  })

  it('accepts an async decision', async () => {
    const s = await scene()
    const { agent } = await s.create()
    agent.ctx.on('agent/pre-step', async () => ({ kind: 'reject' }))
    await runTurn(agent)
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'blocked' } })
  })

  it('ends the turn error when a listener throws', async () => {
    const s = await scene()
    const { agent } = await s.create()
    agent.ctx.on('agent/pre-step', () => {
      throw new Error('gate broke')
    })
    await runTurn(agent)
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'error', error: { message: 'gate broke' } } })
  })

  it('asks again before every step', async () => {
    const s = await scene()
    s.root.tools.register(echo)
    const { agent } = await s.create()
    const steps: number[] = []
    agent.ctx.on('agent/pre-step', (_agent, info, next) => {
      steps.push(info.step)
      return info.step === 2 ? { kind: 'reject' } : next()
    })
    s.scripted.push({ toolCalls: [{ name: 'echo', arguments: '{"text":"x"}' }] })
    await runTurn(agent)
    expect(steps).to.deep.equal([1, 2])
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'blocked' } })
  })
})

describe('agent loop: agent/turn-stop (SPEC §1.4 step 6)', () => {
  it('ends the turn completed after the step’s tools, without another model request', async () => {
    const s = await scene()
    s.root.tools.register(echo)
    const { agent } = await s.create()
    const asked: unknown[] = []
    agent.ctx.on('agent/turn-stop', (_agent: Agent, info: { turn: number; step: number }) => {
      asked.push(info)
      return true
    })
    s.scripted.push({ toolCalls: [{ name: 'echo', arguments: '{"text":"x"}' }] }, { text: 'never asked' })
    await runTurn(agent)
    expect(asked).to.deep.equal([{ turn: 1, step: 1 }])
    expect(typesOf(agent).at(-2)).to.equal('tool/result')
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'completed' } })
    expect(s.scripted.requests).to.have.length(1)
  })

  it('lets the turn go on when every answer is falsy', async () => {
    const s = await scene()
    s.root.tools.register(echo)
    const { agent } = await s.create()
    agent.ctx.on('agent/turn-stop', () => undefined)
    agent.ctx.on('agent/turn-stop', () => false)
    s.scripted.push({ toolCalls: [{ name: 'echo', arguments: '{"text":"x"}' }] }, { text: 'final' })
    await runTurn(agent)
    expect(s.scripted.requests).to.have.length(2)
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'completed' } })
  })

  it('stops even on the last allowed step, ending completed rather than MAX_STEPS', async () => {
    const s = await scene()
    s.root.tools.register(echo)
    const { agent } = await s.create({ agentOptions: { maxSteps: 1 } })
    agent.ctx.on('agent/turn-stop', () => 'stop')
    s.scripted.push({ toolCalls: [{ name: 'echo', arguments: '{"text":"x"}' }] })
    await runTurn(agent)
    expect(lastOf(agent, 'turn/end')).to.deep.equal({ turn: 1, reason: { kind: 'completed' } })
  })
})

describe('agent loop: an adapter that ignores its signal', () => {
  it('still ends a cancelled turn at once, as aborted', async () => {
    const host = await scene()
    let release!: () => void
    const never = new Promise<void>((resolve) => (release = resolve))
    host.root.models.register('stubborn', {
      async *stream() {
        yield { type: 'text-delta' as const, text: 'thinking' }
        await never
        yield { type: 'finish' as const, reason: 'stop' as const }
      },
    })
    const agent = await host.agent({ provider: 'stubborn' })
    const streaming = new Promise<void>((resolve) => {
      const off = host.root.on('session/event', (_session, event) => {
        if (event.type !== 'assistant/delta') return
        off()
        resolve()
      })
    })
    agent.followup('go')
    await streaming
    agent.cancel({ kind: 'user' })
    await agent.whenIdle()
    const types = agent.session.events.map((event) => event.type)
    expect(types.slice(-2)).to.deep.equal(['assistant/message', 'turn/end'])
    expect(agent.session.events.at(-2)!.data).to.deep.include({ content: [{ type: 'text', text: 'thinking' }], interrupted: true })
    expect(agent.session.events.at(-1)!.data).to.deep.equal({ turn: 1, reason: { kind: 'aborted', cause: { kind: 'user' } } })
    release()
  })
})
