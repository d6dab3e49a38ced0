/**
 * Fault injection: model adapters that throw, misbehave or never finish; tools that
 * throw, hang or return non-JSON; listeners that throw in every hook, synchronously and
 * asynchronously. Each fault gives a clear error or turn-end reason, and every test ends with the
 * invariants and the leak baseline (the root hook in test/support/unhandled.ts fails the run on an
 * unhandled rejection).
 */
import { expect } from 'chai'
import fc from 'fast-check'
import type {
  Agent,
  ModelAdapter,
  ModelRequest,
  SessionEventData,
  StreamPart,
  SubagentResult,
  SubagentRun,
  SubagentStartRequest,
  ToolExecution,
} from '../../lib/types.ts'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import { createHost, type TestHost } from '../support/harness.ts'
import { installInvariants } from '../support/invariants.ts'
import { settles } from './probe.ts'
import '../support/unhandled.ts'

interface FaultHost {
  host: TestHost
  parent: Agent
  request(extra?: Partial<SubagentStartRequest>): SubagentStartRequest
  spawn(extra?: Partial<SubagentStartRequest>): Promise<SubagentRun>
  /** Disposes the parent, checks invariants and that the host is back at its baseline. */
  close(): Promise<void>
}

async function faultHost(): Promise<FaultHost> {
  const host = await createHost()
  await host.root.plugin(InProcessRun)
  const invariants = installInvariants(host.root)
  const baseline = host.snapshot()
  const handle = await host.root.agents.create({ agentOptions: { provider: 'scripted', model: 'test' } })
  const request = (extra: Partial<SubagentStartRequest> = {}): SubagentStartRequest => ({
    parent: handle.agent,
    prompt: 'do the task',
    signal: new AbortController().signal,
    ...extra,
  })
  return {
    host,
    parent: handle.agent,
    request,
    spawn: (extra) => host.root.inprocessRun.spawn(request(extra)),
    async close() {
      await settles(handle.dispose(), 'the parent disposal')
      invariants.check()
      expect(host.snapshot()).to.deep.equal(baseline)
      invariants.dispose()
    },
  }
}

/** Runs one child on `adapter` (provider `faulty`) and returns its settled result, disposed. */
async function runOn(adapter: ModelAdapter | { stream: unknown }): Promise<{ result: SubagentResult; child: Agent; logged: string[] }> {
  const f = await faultHost()
  f.host.root.models.register('faulty', adapter as ModelAdapter)
  const run = await f.spawn({ agentOptions: { provider: 'faulty' } })
  const result = await settles(run.result, 'run.result')
  await settles(run.dispose(), 'run.dispose()')
  const logged = f.host.logged()
  await f.close()
  return { result, child: run.agent, logged }
}

function parts(...list: unknown[]): ModelAdapter {
  return {
    async *stream(): AsyncGenerator<StreamPart> {
      for (const part of list) yield part as StreamPart
    },
  }
}

const malformedPrefix = 'the child turn failed: model adapter for provider "faulty"'

describe('fault injection: model adapters', () => {
  it('ends the turn error when stream() throws before returning', async () => {
    const { result } = await runOn({
      stream() {
        throw new Error('adapter exploded')
      },
    })
    expect(result).to.deep.equal({ output: [], stopReason: 'error', diagnostic: 'the child turn failed: adapter exploded', diagnosticText: { key: 'failedWithMessage', params: { message: 'adapter exploded' } } })
  })

  it('ends the turn error when the stream throws before its first part', async () => {
    const { result } = await runOn({
      // biome-ignore lint/correctness/useYield: the fault is that it throws before yielding
      async *stream(): AsyncGenerator<StreamPart> {
        throw new Error('upstream 503')
      },
    })
    expect(result).to.deep.equal({ output: [], stopReason: 'error', diagnostic: 'the child turn failed: upstream 503', diagnosticText: { key: 'failedWithMessage', params: { message: 'upstream 503' } } })
  })

  it('keeps the streamed text as output when the stream throws mid-way', async () => {
    const { result, child } = await runOn({
      async *stream(): AsyncGenerator<StreamPart> {
        yield { type: 'text-delta', text: 'half an ' }
        yield { type: 'text-delta', text: 'answer' }
        throw new Error('connection reset')
      },
    })
    expect(result).to.deep.equal({
      output: [{ type: 'text', text: 'half an answer' }],
      stopReason: 'error',
      diagnostic: 'the child turn failed: connection reset',
      diagnosticText: { key: 'failedWithMessage', params: { message: 'connection reset' } },
    })
    expect(child.session.events.some((event) => event.type === 'assistant/message')).to.equal(false)
  })

  it('ends the turn error when the stream throws after its finish part', async () => {
    const { result } = await runOn({
      async *stream(): AsyncGenerator<StreamPart> {
        yield { type: 'text-delta', text: 'done' }
        yield { type: 'finish', reason: 'stop' }
        throw new Error('trailer broke')
      },
    })
    expect(result.stopReason).to.equal('error')
    expect(result.diagnostic).to.equal('the child turn failed: trailer broke')
  })

  const noIterable: [string, () => unknown][] = [
    ['a number', () => 42],
    ['null', () => null],
    ['a plain object', () => ({ parts: [] })],
  ]
  for (const [what, stream] of noIterable) {
    it(`names the provider when stream() returns ${what}`, async () => {
      const { result } = await runOn({ stream })
      expect(result).to.deep.equal({
        output: [],
        stopReason: 'error',
        diagnostic: 'the child turn failed: model adapter for provider "faulty" returned no async iterable (MODEL_FAILED)',
        diagnosticText: {
          key: 'failedWithMessageAndCode',
          params: { message: 'model adapter for provider "faulty" returned no async iterable', code: 'MODEL_FAILED' },
        },
      })
    })
  }

  it('reports an iterator whose next() returns a non-object', async () => {
    const { result } = await runOn({ stream: () => ({ [Symbol.asyncIterator]: () => ({ next: () => 42 }) }) })
    expect(result.diagnostic).to.equal(`${malformedPrefix} yielded a malformed part: its iterator returned a non-object (MODEL_FAILED)`)
  })

  const malformed: [string, unknown[], string][] = [
    ['null', [null], 'expected an object, got null'],
    ['a string', ['hello'], 'expected an object, got "hello"'],
    ['a text delta whose text is a number', [{ type: 'text-delta', text: 42 }], 'text-delta text must be a string, got number'],
    ['a text delta whose text is an object', [{ type: 'text-delta', text: { a: 1 } }], 'text-delta text must be a string, got object'],
    ['an unknown part type', [{ type: 'image-delta', data: 'AAAA' }], 'unknown part type "image-delta"'],
    ['a part without a type', [{ text: 'x' }], 'unknown part type undefined'],
    ['a tool call with a numeric id', [{ type: 'tool-call', id: 5, name: 'probe', arguments: '{}' }], 'tool-call id must be a string, got number'],
    ['a tool call without a name', [{ type: 'tool-call', id: 'c', arguments: '{}' }], 'tool-call name must be a string, got undefined'],
    ['a tool call with object arguments', [{ type: 'tool-call', id: 'c', name: 'probe', arguments: {} }], 'tool-call arguments must be a string, got object'],
    ['an unknown finish reason', [{ type: 'finish', reason: 'content-filter' }], 'finish reason must be "stop", "tool-calls" or "max-tokens", got "content-filter"'],
    ['usage with string counts', [{ type: 'finish', reason: 'stop', usage: { inputTokens: '3', outputTokens: 1 } }], 'finish usage must have non-negative finite inputTokens and outputTokens'],
    ['usage with BigInt counts', [{ type: 'finish', reason: 'stop', usage: { inputTokens: 3n, outputTokens: 1 } }], 'finish usage must have non-negative finite inputTokens and outputTokens'],
    ['usage with a negative count', [{ type: 'finish', reason: 'stop', usage: { inputTokens: 3, outputTokens: -1 } }], 'finish usage must have non-negative finite inputTokens and outputTokens'],
  ]
  for (const [what, list, problem] of malformed) {
    it(`ends the turn error with a clear message for ${what}`, async () => {
      const { result, child } = await runOn(parts(...list))
      expect(result.stopReason).to.equal('error')
      expect(result.diagnostic).to.equal(`${malformedPrefix} yielded a malformed part: ${problem} (MODEL_FAILED)`)
      // nothing of the malformed part reached the session log, which stays JSON
      expect(() => JSON.stringify(child.session.events)).to.not.throw()
      expect(child.session.events.some((event) => event.type === 'assistant/message')).to.equal(false)
    })
  }

  it('keeps the valid usage of a well-formed finish, and nothing else of it', async () => {
    const { result, child } = await runOn(
      parts({ type: 'text-delta', text: 'ok' }, { type: 'finish', reason: 'stop', usage: { inputTokens: 4, outputTokens: 2, cost: 10n } }),
    )
    expect(result).to.deep.equal({ output: [{ type: 'text', text: 'ok' }], stopReason: 'completed', usage: { inputTokens: 4, outputTokens: 2 } })
    const message = child.session.events.find((event) => event.type === 'assistant/message')!
    expect((message.data as SessionEventData['assistant/message']).usage).to.deep.equal({ inputTokens: 4, outputTokens: 2 })
  })

  for (const [how, cancel] of [
    ['the run is disposed', (run: SubagentRun) => void run.dispose()],
    ['the request signal aborts', (_run: SubagentRun, controller: AbortController) => controller.abort()],
  ] as const) {
    it(`settles a stream that never finishes and ignores its signal once ${how}`, async () => {
      const f = await faultHost()
      let entered!: () => void
      const streaming = new Promise<void>((resolve) => (entered = resolve))
      f.host.root.models.register('faulty', {
        async *stream(): AsyncGenerator<StreamPart> {
          yield { type: 'text-delta', text: 'partial' }
          entered()
          await new Promise<never>(() => {})
        },
      })
      const controller = new AbortController()
      const run = await f.spawn({ agentOptions: { provider: 'faulty' }, signal: controller.signal })
      await streaming
      cancel(run, controller)
      const result = await settles(run.result, 'run.result')
      expect(result.stopReason).to.equal('aborted')
      expect(result.output).to.deep.equal([{ type: 'text', text: 'partial' }])
      await settles(run.dispose(), 'run.dispose()')
      await f.close()
    })
  }

  it('settles a stream that never yields and ignores its signal once the run is disposed', async () => {
    const f = await faultHost()
    let entered!: () => void
    const streaming = new Promise<void>((resolve) => (entered = resolve))
    f.host.root.models.register('faulty', {
      stream: (): AsyncIterable<StreamPart> => ({
        [Symbol.asyncIterator]: () => ({
          next: () => {
            entered()
            return new Promise<never>(() => {})
          },
        }),
      }),
    })
    const run = await f.spawn({ agentOptions: { provider: 'faulty' } })
    await streaming
    await settles(run.dispose(), 'run.dispose()')
    expect(await run.result).to.deep.equal({ output: [], stopReason: 'aborted', diagnostic: 'the run was cancelled (disposed)', diagnosticText: { key: 'cancelledBy', params: { cause: 'disposed' } } })
    await f.close()
  })

  it('contains a cleanup (return) that throws after an aborted stream', async () => {
    const f = await faultHost()
    let entered!: () => void
    const streaming = new Promise<void>((resolve) => (entered = resolve))
    let returned = false
    f.host.root.models.register('faulty', {
      stream: (request: ModelRequest): AsyncIterable<StreamPart> => ({
        [Symbol.asyncIterator]: () => ({
          next: () => {
            entered()
            return new Promise<never>((_, reject) => request.signal.addEventListener('abort', () => reject(request.signal.reason)))
          },
          return: () => {
            returned = true
            throw new Error('cleanup broke')
          },
        }),
      }),
    })
    const run = await f.spawn({ agentOptions: { provider: 'faulty' } })
    await streaming
    await settles(run.dispose(), 'run.dispose()')
    expect((await run.result).stopReason).to.equal('aborted')
    expect(returned).to.equal(true)
    await f.close()
  })
})

/** Runs one child that calls tool `faulty` once, then answers `after`. */
async function callTool(execute: (args: never, exec: ToolExecution) => unknown): Promise<SessionEventData['tool/result']> {
  const f = await faultHost()
  const off = f.host.root.tools.register({ name: 'faulty', description: 'Fails on purpose.', parameters: { type: 'object' }, execute })
  f.host.scripted.push({ toolCalls: [{ name: 'faulty', arguments: {} }] }, { text: 'after' })
  const run = await f.spawn()
  const result = await settles(run.result, 'run.result')
  expect(result).to.deep.equal({ output: [{ type: 'text', text: 'after' }], stopReason: 'completed' })
  const recorded = run.agent.session.events.find((event) => event.type === 'tool/result')?.data as SessionEventData['tool/result']
  expect(() => JSON.stringify(run.agent.session.events), 'the session log stays JSON').to.not.throw()
  await settles(run.dispose(), 'run.dispose()')
  off()
  await f.close()
  return recorded
}

function errorText(message: string): { isError: true; content: { type: 'text'; text: string }[] } {
  return { isError: true, content: [{ type: 'text', text: `Error: ${message}` }] }
}

describe('fault injection: tools', () => {
  const cycle: Record<string, unknown> = { a: 1 }
  cycle.self = cycle
  const thrown: [string, () => unknown, string][] = [
    ['throws an Error', () => { throw new Error('tool broke') }, 'tool broke'],
    ['rejects', async () => { throw new TypeError('async tool broke') }, 'async tool broke'],
    ['throws a string', () => { throw 'plain string' }, 'plain string'],
    ['throws undefined', () => { throw undefined }, 'undefined'],
    ['throws an object without a prototype', () => { throw Object.create(null) }, 'unprintable thrown object'],
    // biome-ignore lint/suspicious/noThenProperty: the fault is a thenable whose then throws
    ['returns a thenable whose then throws', () => ({ then() { throw new Error('then broke') } }), 'then broke'],
  ]
  const nonJson: [string, () => unknown, string][] = [
    ['a function', () => () => 1, 'value is not JSON data (function)'],
    ['a cycle', () => cycle, 'value.self is not JSON data (circular reference)'],
    ['a BigInt', () => 10n, 'value is not JSON data (bigint)'],
    ['a nested BigInt', () => ({ a: [1, 2n] }), 'value.a[1] is not JSON data (bigint)'],
    ['a symbol', () => Symbol('s'), 'value is not JSON data (symbol)'],
    ['NaN', () => Number.NaN, 'value is not JSON data (non-finite number)'],
    ['a Map', () => new Map([[1, 2]]), 'value is not JSON data (non-plain object)'],
    ['an object whose getter throws', () => ({ get x(): never { throw new Error('getter broke') } }), 'getter broke'],
    ['a result whose content is not blocks', () => ({ isError: false, content: [42] }), 'tool result content block 0 must be an object, got number'],
    ['a result whose text is a BigInt', () => ({ isError: false, content: [{ type: 'text', text: 1n }] }), 'tool result content block 0 text must be a string, got bigint'],
    ['a result whose value is not JSON', () => ({ isError: false, content: [], value: 1n }), 'value is not JSON data (bigint)'],
    ['a result whose code is not a string', () => ({ isError: true, content: [], code: 7 }), 'tool result code must be a string'],
  ]
  for (const [what, execute, message] of thrown) {
    it(`reports a tool that ${what} as an error result, and the turn goes on`, async () => {
      const recorded = await callTool(execute)
      expect(recorded).to.deep.include(errorText(message))
    })
  }
  for (const [what, execute, message] of nonJson) {
    it(`reports a tool that returns ${what} as an error result naming the problem`, async () => {
      const recorded = await callTool(execute)
      expect(recorded).to.deep.include(errorText(message))
    })
  }

  it('records only the documented fields of a result’s content blocks', async () => {
    const recorded = await callTool(() => ({ isError: false, content: [{ type: 'text', text: 'fine', secret: 1n, self: cycle }] }))
    expect(recorded.content).to.deep.equal([{ type: 'text', text: 'fine' }])
  })

  for (const [how, cancel, cause] of [
    ['the run is disposed', (run: SubagentRun) => void run.dispose(), 'disposed'],
    ['the request signal aborts', (_run: SubagentRun, controller: AbortController) => controller.abort(), 'parent'],
  ] as const) {
    it(`ends a turn whose tool hangs until its signal aborts as aborted once ${how}`, async () => {
      const f = await faultHost()
      let entered!: () => void
      const running = new Promise<void>((resolve) => (entered = resolve))
      f.host.root.tools.register({
        name: 'faulty',
        description: 'Hangs until cancelled.',
        parameters: { type: 'object' },
        execute: (_args: never, exec: ToolExecution) =>
          new Promise((_, reject) => {
            entered()
            exec.signal.addEventListener('abort', () => reject(exec.signal.reason), { once: true })
          }),
      })
      f.host.scripted.push({ toolCalls: [{ name: 'faulty', arguments: {} }] })
      const controller = new AbortController()
      const run = await f.spawn({ signal: controller.signal })
      await running
      cancel(run, controller)
      const result = await settles(run.result, 'run.result')
      expect(result.stopReason).to.equal('aborted')
      expect(result.diagnostic).to.equal(`the run was cancelled (${cause})`)
      const recorded = run.agent.session.events.find((event) => event.type === 'tool/result')?.data
      expect(recorded).to.deep.include({ isError: true, content: [{ type: 'text', text: `Error: turn cancelled (${cause})` }] })
      await settles(run.dispose(), 'run.dispose()')
      await f.close()
    })
  }
})

type Outcome =
  | { kind: 'contained'; logged: string }
  | { kind: 'turn error'; diagnostic: string }
  | { kind: 'tool error'; text: string }
  | { kind: 'start rejects' }
  | { kind: 'result rejects' }

const broke = (hook: string) => `${hook} listener broke`

/** What a throwing (or rejecting) listener of each hook does to a run that calls one tool. */
function outcomeOf(hook: string, isAsync: boolean): Outcome {
  switch (hook) {
    case 'agent/pre-step':
    case 'agent/turn-stop':
      return { kind: 'turn error', diagnostic: `the child turn failed: ${broke(hook)}` }
    case 'system-prompt/assemble':
      return {
        kind: 'turn error',
        diagnostic: isAsync
          ? 'the child turn failed: a system-prompt/assemble listener returned a promise; the hook is synchronous'
          : `the child turn failed: ${broke(hook)}`,
      }
    case 'tools/pre-execute':
    case 'tools/post-execute':
      return { kind: 'tool error', text: `Error: ${hook} listener failed: ${broke(hook)}` }
    case 'subagent/prepare':
      return isAsync ? { kind: 'contained', logged: `a "${hook}" listener failed: ${broke(hook)}` } : { kind: 'start rejects' }
    case 'subagent/setup':
      return { kind: 'start rejects' }
    case 'subagent/settle':
      return { kind: 'result rejects' }
    default:
      return { kind: 'contained', logged: `a "${hook}" listener failed: ` }
  }
}

const hooks = [
  'session/event',
  'agent/created',
  'agent/disposed',
  'agent/pre-step',
  'agent/turn-stop',
  'system-prompt/assemble',
  'tools/pre-execute',
  'tools/post-execute',
  'tools/result',
  'subagent/prepare',
  'subagent/setup',
  'subagent/settle',
  'subagent/start',
  'subagent/end',
]

describe('fault injection: listeners that throw in every hook', () => {
  for (const hook of hooks) {
    for (const isAsync of [false, true]) {
      const outcome = outcomeOf(hook, isAsync)
      const how = isAsync ? 'rejects' : 'throws'
      it(`handles a ${hook} listener that ${how}: ${outcome.kind}`, async () => {
        const f = await faultHost()
        const { root } = f.host
        const tool = root.tools.register({ name: 'probe', description: 'Probes.', parameters: { type: 'object' }, execute: () => 'probed' })
        const fail = isAsync
          ? async () => {
              throw new Error(broke(hook))
            }
          : () => {
              throw new Error(broke(hook))
            }
        const off = root.on(hook as 'session/event', fail as never)
        root.scripted.push({ toolCalls: [{ name: 'probe', arguments: {} }] }, { text: 'done' })
        let run: SubagentRun | undefined
        let startError: unknown
        await settles(f.spawn({ persona: 'A persona, so the setup window exists.' }), 'the start').then(
          (value) => (run = value),
          (error) => (startError = error),
        )
        if (outcome.kind === 'start rejects') {
          expect((startError as Error)?.message).to.equal(broke(hook))
          root.scripted.reset()
        } else {
          expect(startError).to.equal(undefined)
          let resultError: unknown
          const result = await settles(run!.result, 'run.result').catch((error) => void (resultError = error))
          if (outcome.kind === 'result rejects') {
            expect((resultError as Error)?.message).to.equal(broke(hook))
          } else if (outcome.kind === 'turn error') {
            expect(result?.stopReason).to.equal('error')
            expect(result?.diagnostic).to.equal(outcome.diagnostic)
            root.scripted.reset()
          } else {
            expect(result).to.deep.equal({ output: [{ type: 'text', text: 'done' }], stopReason: 'completed' })
            if (outcome.kind === 'tool error') {
              const recorded = run!.agent.session.events.find((event) => event.type === 'tool/result')?.data
              expect(recorded).to.deep.include({ isError: true, content: [{ type: 'text', text: outcome.text }] })
            }
          }
          await settles(run!.dispose(), 'run.dispose()')
        }
        if (outcome.kind === 'contained') {
          expect(f.host.logged().some((line) => line.includes(outcome.logged) && line.includes(broke(hook)))).to.equal(true)
        }
        off()
        tool()
        await f.close()
      })
    }
  }
})

/** Stream parts as an adapter might yield them: mostly well-formed, sometimes anything at all. */
const streamPart: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ type: fc.constant('text-delta'), text: fc.string({ maxLength: 4 }) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      type: fc.constant('tool-call'),
      id: fc.string({ maxLength: 3 }),
      name: fc.constantFrom('probe', 'missing', ''),
      arguments: fc.oneof(fc.constant('{}'), fc.string({ maxLength: 4 })),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record(
      {
        type: fc.constant('finish'),
        reason: fc.constantFrom('stop', 'tool-calls', 'max-tokens'),
        usage: fc.record({ inputTokens: fc.nat(50), outputTokens: fc.nat(50) }),
      },
      { requiredKeys: ['type', 'reason'] },
    ),
  },
  { weight: 1, arbitrary: fc.anything({ maxDepth: 2, withBigInt: true, withNullPrototype: true }) },
  {
    weight: 1,
    arbitrary: fc.record({
      type: fc.constantFrom('text-delta', 'tool-call', 'finish', 'reasoning-delta'),
      text: fc.anything({ maxDepth: 1, withBigInt: true }),
      reason: fc.anything({ maxDepth: 1 }),
      usage: fc.anything({ maxDepth: 1, withBigInt: true }),
    }),
  },
)

describe('fault injection: properties', () => {
  it('settles every run whatever its adapter yields, with a JSON log and nothing left behind', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(streamPart, { maxLength: 6 }), { minLength: 1, maxLength: 3 }), async (steps) => {
        const f = await faultHost()
        f.host.root.tools.register({ name: 'probe', description: 'Probes.', parameters: { type: 'object' }, execute: () => 'probed' })
        let call = 0
        f.host.root.models.register('faulty', {
          async *stream(): AsyncGenerator<StreamPart> {
            const list = steps[call++] ?? [{ type: 'finish', reason: 'stop' }]
            for (const part of list) yield part as StreamPart
          },
        })
        const run = await f.spawn({ agentOptions: { provider: 'faulty', maxSteps: 4 } })
        const result = await settles(run.result, 'run.result')
        expect(['completed', 'error', 'max-tokens']).to.include(result.stopReason)
        if (result.stopReason !== 'completed') expect(result.diagnostic).to.be.a('string')
        expect(() => JSON.stringify(run.agent.session.events)).to.not.throw()
        expect(() => JSON.stringify(result)).to.not.throw()
        for (const block of result.output) expect(['text', 'reasoning', 'tool-call']).to.include(block.type)
        await settles(run.dispose(), 'run.dispose()')
        await f.close()
      }),
      { numRuns: 150 },
    )
  })

  it('turns whatever a tool returns or throws into a JSON tool/result, and the run goes on', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.anything({ maxDepth: 3, withBigInt: true, withNullPrototype: true, withMap: true, withSet: true, withDate: true }),
        fc.boolean(),
        async (value, isThrown) => {
          const recorded = await callTool(() => {
            if (isThrown) throw value
            return value
          })
          expect(() => JSON.stringify(recorded)).to.not.throw()
          expect(recorded.content.every((block) => typeof (block as { text?: unknown }).text === 'string')).to.equal(true)
          if (isThrown) expect(recorded.isError).to.equal(true)
        },
      ),
      { numRuns: 150 },
    )
  })
})
