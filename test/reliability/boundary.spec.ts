/**
 * Bad input at the boundary: every public entry given wrong types, missing fields, huge
 * and deeply nested values, and prototype-polluting keys. Each gives a clear error; nothing is
 * half-made (the snapshot and the host's state are unchanged) and nothing is lost (what was there
 * before still works, and accepted input arrives whole).
 */
import { expect } from 'chai'
import type { Context, Plugin } from 'cordis'
import type { Agent, AgentHandle, ContentBlock, CreateAgentOptions, SessionEvent, SubagentStartRequest } from '../../lib/types.ts'
import DepthPolicy from '../../plugins/depth-policy/index.ts'
import { Host } from '../../plugins/host/index.ts'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import { ScriptedModel } from '../../plugins/scripted-model/index.ts'
import { createHost, type Snapshot, type TestHost } from '../support/harness.ts'
import { installInvariants, type Invariants } from '../support/invariants.ts'
import { settles, StructuredOutput } from './probe.ts'
import '../support/unhandled.ts'

interface State {
  snapshot: Snapshot
  agents: string[]
  sessions: string[]
  parentEvents: number
  tools: string[]
  prompt: string
}

interface Boundary {
  host: TestHost
  root: Context
  parent: Agent
  parentHandle: AgentHandle
  invariants: Invariants
  request(extra?: Record<string, unknown>): SubagentStartRequest
  state(): State
  /** Checks that a good spawn still works, then disposes the parent and checks the invariants. */
  close(): Promise<void>
}

async function boundary(): Promise<Boundary> {
  const host = await createHost()
  const { root } = host
  await root.plugin(InProcessRun)
  await root.plugin(StructuredOutput)
  const invariants = installInvariants(root)
  root.tools.register({ name: 'read', description: 'Reads.', parameters: { type: 'object' }, execute: () => 'read' })
  root.systemPrompt.section({ name: 'deployment', order: 50, text: 'Deployment rules.' })
  const parentHandle = await root.agents.create({ agentOptions: { provider: 'scripted', model: 'test' } })
  const parent = parentHandle.agent
  // the parent's scope context is made lazily, by its first child with a persona or tool filter
  void parent.ctx
  const bare = host.snapshot()
  const state = (): State => ({
    snapshot: host.snapshot(),
    agents: root.agents.list().map((agent) => agent.id),
    sessions: root.sessions.list().map((session) => session.id),
    parentEvents: parent.session.events.length,
    tools: root.tools.schemas().map((schema) => schema.name),
    prompt: root.systemPrompt.assemble(parent).text,
  })
  return {
    host,
    root,
    parent,
    parentHandle,
    invariants,
    request: (extra = {}) => ({ parent, prompt: 'do the task', signal: new AbortController().signal, ...extra }) as SubagentStartRequest,
    state,
    async close() {
      host.scripted.push({ text: 'still works' })
      const run = await root.inprocessRun.spawn({ parent, prompt: 'again', signal: new AbortController().signal, toolFilter: { allow: ['read'] } })
      expect(await settles(run.result, 'run.result')).to.deep.equal({ output: [{ type: 'text', text: 'still works' }], stopReason: 'completed' })
      await run.dispose()
      expect(host.snapshot()).to.deep.equal(bare)
      await parentHandle.dispose()
      invariants.check()
      invariants.dispose()
    },
  }
}

async function rejectionOf(promise: Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    await settles(promise, 'the call')
  } catch (error) {
    return error as Error & { code?: string }
  }
  return expect.fail('expected a rejection, got a fulfilment')
}

function throwOf(fn: () => unknown): Error & { code?: string } {
  try {
    fn()
  } catch (error) {
    return error as Error & { code?: string }
  }
  return expect.fail('expected a throw')
}

/** Nests `leaf` `depth` levels deep in single-key objects. */
function nested(depth: number, leaf: unknown = 1): unknown {
  let value = leaf
  for (let i = 0; i < depth; i++) value = { d: value }
  return value
}

const safeMax = Number.MAX_SAFE_INTEGER

type Expectation = [type: ErrorConstructor | TypeErrorConstructor | RangeErrorConstructor, message: string]

describe('boundary: inprocessRun.start / spawn / fork', () => {
  const requestCases: [string, (b: Boundary) => unknown, ...Expectation][] = [
    ['no request', () => undefined, TypeError, 'subagent request must be an object'],
    ['a null request', () => null, TypeError, 'subagent request must be an object'],
    ['a string request', () => 'do it', TypeError, 'subagent request must be an object'],
    ['no parent', (b) => ({ ...b.request(), parent: undefined }), TypeError, 'subagent request parent must be an agent'],
    ['an empty parent', (b) => b.request({ parent: {} }), TypeError, 'subagent request parent must be an agent'],
    ['a parent without a session header', (b) => b.request({ parent: { id: 'p', followup() {}, options: {}, session: { events: [] } } }), TypeError, 'subagent request parent must be an agent'],
    ['a parent whose events are not a list', (b) => b.request({ parent: { id: 'p', followup() {}, options: {}, session: { header: {}, events: 5 } } }), TypeError, 'subagent request parent must be an agent'],
    ['no prompt', (b) => ({ ...b.request(), prompt: undefined }), TypeError, 'subagent request prompt must be a string or an array of content blocks'],
    ['an object prompt', (b) => b.request({ prompt: { text: 'x' } }), TypeError, 'subagent request prompt must be a string or an array of content blocks'],
    ['a null prompt block', (b) => b.request({ prompt: [null] }), TypeError, 'subagent request prompt block 0 must be an object, got null'],
    ['a prompt block with numeric text', (b) => b.request({ prompt: [{ type: 'text', text: 'a' }, { type: 'text', text: 5 }] }), TypeError, 'subagent request prompt block 1 text must be a string, got number'],
    ['a prompt block of unknown type', (b) => b.request({ prompt: [{ type: 'image', url: 'x' }] }), TypeError, 'subagent request prompt block 0 has unknown type "image"'],
    ['a tool-call prompt block without arguments', (b) => b.request({ prompt: [{ type: 'tool-call', id: 'c', name: 'n' }] }), TypeError, 'subagent request prompt block 0 arguments must be a string, got undefined'],
    ['no signal', (b) => ({ ...b.request(), signal: undefined }), TypeError, 'subagent request signal must be an AbortSignal'],
    ['a signal look-alike', (b) => b.request({ signal: { aborted: false, addEventListener() {} } }), TypeError, 'subagent request signal must be an AbortSignal'],
    ['a negative maxDepth', (b) => b.request({ maxDepth: -1 }), TypeError, 'subagent maxDepth must be a non-negative safe integer'],
    ['a fractional maxDepth', (b) => b.request({ maxDepth: 1.5 }), TypeError, 'subagent maxDepth must be a non-negative safe integer'],
    ['a NaN maxDepth', (b) => b.request({ maxDepth: Number.NaN }), TypeError, 'subagent maxDepth must be a non-negative safe integer'],
    ['a string maxDepth', (b) => b.request({ maxDepth: '2' }), TypeError, 'subagent maxDepth must be a non-negative safe integer'],
    ['a -0 maxDepth', (b) => b.request({ maxDepth: -0 }), TypeError, 'subagent maxDepth must be a non-negative safe integer'],
    ['a maxDepth of 2^53', (b) => b.request({ maxDepth: 2 ** 53 }), TypeError, 'subagent maxDepth must be a non-negative safe integer'],
    ['a numeric label', (b) => b.request({ label: 7 }), TypeError, 'subagent request label must be a string'],
    ['an object persona', (b) => b.request({ persona: {} }), TypeError, 'subagent request persona must be a string'],
    ['string agentOptions', (b) => b.request({ agentOptions: 'fast' }), TypeError, 'subagent request agentOptions must be an object'],
    ['array agentOptions', (b) => b.request({ agentOptions: [] }), TypeError, 'subagent request agentOptions must be an object'],
    ['null agentOptions', (b) => b.request({ agentOptions: null }), TypeError, 'subagent request agentOptions must be an object'],
    ['an array toolFilter', (b) => b.request({ toolFilter: ['read'] }), TypeError, 'subagent request toolFilter must be an object'],
    ['a string allow list', (b) => b.request({ toolFilter: { allow: 'read' } }), TypeError, 'subagent request toolFilter.allow must be an array of tool names'],
    ['numeric deny names', (b) => b.request({ toolFilter: { deny: [1] } }), TypeError, 'subagent request toolFilter.deny must be an array of tool names'],
  ]
  for (const [what, make, type, message] of requestCases) {
    it(`rejects ${what} at entry with a ${type.name}, creating nothing`, async () => {
      const b = await boundary()
      const before = b.state()
      const error = await rejectionOf(b.root.inprocessRun.spawn(make(b) as SubagentStartRequest))
      expect(error).to.be.instanceOf(type)
      expect(error.message).to.equal(message)
      expect(b.state()).to.deep.equal(before)
      await b.close()
    })
  }

  const laterCases: [string, (b: Boundary) => Promise<unknown>, string, string][] = [
    ['an aborted signal', (b) => b.root.inprocessRun.spawn(b.request({ signal: AbortSignal.abort() })), 'ABORTED', 'subagent request was aborted before child publication'],
    ['agentOptions with maxTokens 0', (b) => b.root.inprocessRun.spawn(b.request({ agentOptions: { maxTokens: 0 } })), 'INVALID_OPTIONS', 'agent option maxTokens must be a positive safe integer'],
    ['agentOptions with a numeric provider', (b) => b.root.inprocessRun.spawn(b.request({ agentOptions: { provider: 5 } })), 'INVALID_OPTIONS', 'agent option provider must be a string'],
    ['an unknown tool in the filter', (b) => b.root.inprocessRun.spawn(b.request({ toolFilter: { allow: ['read', 'nope'] } })), 'UNKNOWN_TOOL', 'unknown global tool "nope"'],
    ['a seed that is not a list', (b) => b.root.inprocessRun.start(b.request(), { seed: {} as never }), 'INVALID_SESSION', 'session seed must be an array of events'],
    ['a seed with a gap in seq', (b) => b.root.inprocessRun.start(b.request(), { seed: [{ seq: 1, type: 'x', data: 1 }] }), 'INVALID_SESSION', 'session seed event 0 has seq 1, expected 0'],
    ['a seed event without a type', (b) => b.root.inprocessRun.start(b.request(), { seed: [{ seq: 0, type: '', data: 1 }] }), 'INVALID_SESSION', 'session seed event 0 must have a non-empty string type'],
    ['a seed event with BigInt data', (b) => b.root.inprocessRun.start(b.request(), { seed: [{ seq: 0, type: 'x', data: { n: 1n } }] }), 'INVALID_SESSION', 'session seed event 0 data must be JSON data'],
    ['a seed event nested 300 levels deep', (b) => b.root.inprocessRun.start(b.request(), { seed: [{ seq: 0, type: 'x', data: nested(300) }] }), 'INVALID_SESSION', 'session seed event 0 data must be JSON data nested at most 256 levels deep'],
  ]
  for (const [what, start, code, message] of laterCases) {
    it(`rejects ${what} with code ${code}, leaving nothing behind`, async () => {
      const b = await boundary()
      const before = b.state()
      const error = await rejectionOf(start(b))
      expect(error.message).to.equal(message)
      expect(error.code).to.equal(code)
      expect(b.state()).to.deep.equal(before)
      await b.close()
    })
  }

  it('rejects a parent that was disposed with the owner error, leaving nothing behind', async () => {
    const b = await boundary()
    const gone = await b.root.agents.create({ agentOptions: { provider: 'scripted', model: 'test' } })
    await gone.dispose()
    const before = b.state()
    const error = await rejectionOf(b.root.inprocessRun.spawn(b.request({ parent: gone.agent })))
    expect(error.message).to.equal(`owner agent "${gone.agent.id}" is not live`)
    expect(b.state()).to.deep.equal(before)
    await b.close()
  })

  it('rejects a parent whose runtime subagentDepth is fractional', async () => {
    const b = await boundary()
    const odd = await b.root.agents.create({ agentOptions: { provider: 'scripted', model: 'test', subagentDepth: 1.5 } })
    const before = b.state()
    const error = await rejectionOf(b.root.inprocessRun.spawn(b.request({ parent: odd.agent })))
    expect(error).to.be.instanceOf(TypeError)
    expect(error.message).to.equal('agent subagentDepth must be a non-negative safe integer')
    expect(b.state()).to.deep.equal(before)
    await odd.dispose()
    await b.close()
  })

  it('rejects a child of a parent at the largest safe depth with a RangeError', async () => {
    const b = await boundary()
    const deepest = await b.root.agents.create({ header: { delegationDepth: safeMax }, agentOptions: { provider: 'scripted', model: 'test' } })
    const before = b.state()
    const error = await rejectionOf(b.root.inprocessRun.spawn(b.request({ parent: deepest.agent })))
    expect(error).to.be.instanceOf(RangeError)
    expect(error.message).to.equal('subagent child depth exceeds the safe-integer range')
    expect(b.state()).to.deep.equal(before)
    await deepest.dispose()
    await b.close()
  })

  const schemaCases: [string, unknown, string][] = [
    ['a string', 'object', 'unsupported JSON schema: $: must be a schema object'],
    ['a root that is not an object type', { type: 'string' }, 'unsupported JSON schema: $: root type must be "object"'],
  ]
  for (const [what, outputSchema, message] of schemaCases) {
    it(`rejects an outputSchema that is ${what} before any child exists`, async () => {
      const b = await boundary()
      const before = b.state()
      const error = await rejectionOf(b.root.inprocessRun.spawn(b.request({ outputSchema })))
      expect(error.code).to.equal('UNSUPPORTED_SCHEMA')
      expect(error.message).to.equal(message)
      expect(b.state()).to.deep.equal(before)
      await b.close()
    })
  }

  it('rejects an outputSchema nested 10,000 levels deep with a bounded message', async () => {
    const b = await boundary()
    let schema: Record<string, unknown> = { type: 'string' }
    for (let i = 0; i < 10_000; i++) schema = { type: 'object', properties: { a: schema } }
    const before = b.state()
    const error = await rejectionOf(b.root.inprocessRun.spawn(b.request({ outputSchema: schema })))
    expect(error.code).to.equal('UNSUPPORTED_SCHEMA')
    expect(error.message).to.match(/: nesting deeper than 64 levels$/)
    expect(error.message.length).to.be.below(4096)
    expect(b.state()).to.deep.equal(before)
    await b.close()
  })

  it('captures a structured value whose properties are named __proto__ and constructor', async () => {
    const b = await boundary()
    const schema = JSON.parse(
      '{"type":"object","properties":{"__proto__":{"type":"string"},"constructor":{"type":"integer"}},"required":["__proto__","constructor"],"additionalProperties":false}',
    )
    b.host.scripted.push({ toolCalls: [{ name: 'structured_output', arguments: '{"__proto__":"kept","constructor":3}' }] })
    const run = await b.root.inprocessRun.spawn(b.request({ outputSchema: schema }))
    const result = await settles(run.result, 'run.result')
    expect(result.stopReason).to.equal('completed')
    expect(Object.keys(result.structured as object)).to.deep.equal(['__proto__', 'constructor'])
    expect(Object.getPrototypeOf(result.structured)).to.equal(Object.prototype)
    expect(({} as Record<string, unknown>).constructor).to.equal(Object)
    await run.dispose()
    await b.close()
  })

  it('delivers a 1e6-character prompt and persona whole', async () => {
    const b = await boundary()
    const prompt = 'p'.repeat(1e6)
    const persona = 'q'.repeat(1e6)
    b.host.scripted.push({ text: 'read it' })
    const run = await b.root.inprocessRun.spawn(b.request({ prompt, persona }))
    expect((await settles(run.result, 'run.result')).stopReason).to.equal('completed')
    const request = b.host.scripted.requests.at(-1)!
    expect(request.messages[0]).to.deep.equal({ role: 'user', content: [{ type: 'text', text: prompt }] })
    expect(request.system.startsWith(persona)).to.equal(true)
    await run.dispose()
    await b.close()
  })

  it('keeps prompt blocks whole but drops undocumented keys, however deep or unserializable', async () => {
    const b = await boundary()
    const prompt = [{ type: 'text', text: 'look', extra: nested(100_000), big: 1n }] as unknown as ContentBlock[]
    b.host.scripted.push({ text: 'ok' })
    const run = await b.root.inprocessRun.spawn(b.request({ prompt }))
    expect((await settles(run.result, 'run.result')).stopReason).to.equal('completed')
    const message = run.agent.session.events.find((event) => event.type === 'user/message')
    expect(message?.data).to.deep.equal({ content: [{ type: 'text', text: 'look' }], source: { kind: 'user' } })
    await run.dispose()
    await b.close()
  })

  it('keeps __proto__ and constructor keys of agentOptions as plain keys, polluting nothing', async () => {
    const b = await boundary()
    const agentOptions = JSON.parse('{"__proto__":{"provider":"evil","polluted":true},"constructor":{"prototype":{"polluted":true}},"model":"m2"}')
    b.host.scripted.push({ text: 'ok' })
    const run = await b.root.inprocessRun.spawn(b.request({ agentOptions }))
    const { options } = run.agent
    expect(Object.getPrototypeOf(options)).to.equal(Object.prototype)
    expect(Object.keys(options)).to.deep.equal(['provider', 'model', '__proto__', 'constructor', 'subagentDepth'])
    expect(options.provider).to.equal('scripted')
    expect(options.model).to.equal('m2')
    expect(({} as Record<string, unknown>).polluted).to.equal(undefined)
    expect((await settles(run.result, 'run.result')).stopReason).to.equal('completed')
    await run.dispose()
    await b.close()
  })

  it('forks a parent with a 100,000-event history, seeding every event', async () => {
    const b = await boundary()
    const seed: SessionEvent[] = []
    for (let turn = 1; seed.length < 100_000; turn++) {
      seed.push({ seq: seed.length, type: 'turn/start', data: { turn, trigger: 'message' } })
      seed.push({ seq: seed.length, type: 'turn/end', data: { turn, reason: { kind: 'completed' } } })
    }
    const old = await b.root.agents.create({ seed, agentOptions: { provider: 'scripted', model: 'test' } })
    b.host.scripted.push({ text: 'forked' })
    const run = await b.root.inprocessRun.fork(b.request({ parent: old.agent }))
    expect(await settles(run.result, 'run.result')).to.deep.equal({ output: [{ type: 'text', text: 'forked' }], stopReason: 'completed' })
    // the seed runs through the last turn/end, so the parent's own end-seed marker stays out
    expect(run.agent.session.header.seedLength).to.equal(100_000)
    expect(run.agent.session.events.slice(0, 100_000)).to.deep.equal(old.agent.session.events.slice(0, 100_000))
    await run.dispose()
    await old.dispose()
    await b.close()
  })
})

describe('boundary: agents.create options', () => {
  const cases: [string, () => unknown, string][] = [
    ['null options', () => null, 'agent create options must be an object'],
    ['a numeric sessionId', () => ({ sessionId: 5 }), 'sessionId must be a non-empty string'],
    ['an empty sessionId', () => ({ sessionId: '' }), 'sessionId must be a non-empty string'],
    ['a signal look-alike', () => ({ signal: { aborted: false } }), 'agent create signal must be an AbortSignal'],
    ['a setup that is not a function', () => ({ setup: 'later' }), 'agent create setup must be a function'],
    ['a negative header depth', () => ({ header: { delegationDepth: -1 } }), 'session header delegationDepth must be a non-negative safe integer'],
    ['a fractional header seedLength', () => ({ header: { seedLength: 1.5 } }), 'session header seedLength must be a non-negative safe integer'],
    ['a string header depth', () => ({ header: { delegationDepth: '1' } }), 'session header delegationDepth must be a non-negative safe integer'],
    ['a numeric cwd', () => ({ header: { cwd: 5 } }), 'session header cwd must be a string'],
    ['an unknown origin', () => ({ header: { origin: 'elsewhere' } }), 'session header origin must be "subagent"'],
    ['array agentOptions', () => ({ agentOptions: [] }), 'agent options must be an object'],
    ['a fractional maxSteps', () => ({ agentOptions: { maxSteps: 1.5 } }), 'agent option maxSteps must be a positive safe integer'],
    ['an object model', () => ({ agentOptions: { model: {} } }), 'agent option model must be a string'],
    ['a seed that is an object', () => ({ seed: {} }), 'session seed must be an array of events'],
    ['a null seed event', () => ({ seed: [null] }), 'session seed event 0 must be an object'],
    ['a seed event with a numeric type', () => ({ seed: [{ seq: 0, type: 5, data: 1 }] }), 'session seed event 0 must have a non-empty string type'],
    ['a seed event holding a function', () => ({ seed: [{ seq: 0, type: 'x', data: { f: () => 1 } }] }), 'session seed event 0 data must be JSON data'],
    ['a seed event holding a cycle', () => {
      const data: Record<string, unknown> = {}
      data.self = data
      return { seed: [{ seq: 0, type: 'x', data }] }
    }, 'session seed event 0 data must be JSON data nested at most 256 levels deep'],
  ]
  for (const [what, make, message] of cases) {
    it(`rejects ${what} with a clear error, creating nothing`, async () => {
      const b = await boundary()
      const before = b.state()
      const error = await rejectionOf(b.root.agents.create(make() as CreateAgentOptions))
      expect(error.message).to.equal(message)
      expect(b.state()).to.deep.equal(before)
      await b.close()
    })
  }

  it('rejects an id that is taken, leaving the live agent untouched', async () => {
    const b = await boundary()
    const before = b.state()
    const error = await rejectionOf(b.root.agents.create({ sessionId: b.parent.id }))
    expect(error.message).to.equal(`session "${b.parent.id}" already exists`)
    expect(b.state()).to.deep.equal(before)
    expect(b.root.agents.get(b.parent.id)).to.equal(b.parent)
    await b.close()
  })

  it('rejects an owner that is not live', async () => {
    const b = await boundary()
    const gone = await b.root.agents.create({})
    await gone.dispose()
    const before = b.state()
    const error = await rejectionOf(b.root.agents.create({ owner: gone.agent } as CreateAgentOptions))
    expect(error.message).to.equal(`owner agent "${gone.agent.id}" is not live`)
    expect(b.state()).to.deep.equal(before)
    await b.close()
  })

  it('ignores a __proto__ key in the header and keeps one in seed data as plain data', async () => {
    const b = await boundary()
    const header = JSON.parse('{"__proto__":{"delegationDepth":99},"cwd":"/work"}')
    const data = JSON.parse('{"__proto__":{"polluted":true},"kept":1}')
    const handle = await b.root.agents.create({ header, seed: [{ seq: 0, type: 'note', data }] })
    const { session } = handle.agent
    expect(session.header.delegationDepth).to.equal(undefined)
    expect(session.header.cwd).to.equal('/work')
    expect(Object.keys(session.events[0].data as object)).to.deep.equal(['__proto__', 'kept'])
    expect(({} as Record<string, unknown>).polluted).to.equal(undefined)
    await handle.dispose()
    await b.close()
  })
})

const definition = { name: 'fine', description: 'Fine.', parameters: { type: 'object' }, execute: () => 'fine' }

describe('boundary: tools.register, systemPrompt.section, models.register', () => {
  const cases: [string, (root: Context) => unknown, string][] = [
    ['a null tool', (root) => root.tools.register(null as never), 'tool definition must be an object'],
    ['a tool name with a space', (root) => root.tools.register({ ...definition, name: 'a b' }), 'tool name "a b" must match /^[A-Za-z0-9_-]{1,64}$/'],
    ['a 65-character tool name', (root) => root.tools.register({ ...definition, name: 'x'.repeat(65) }), `tool name "${'x'.repeat(65)}" must match /^[A-Za-z0-9_-]{1,64}$/`],
    ['a numeric tool name', (root) => root.tools.register({ ...definition, name: 5 as never }), 'tool name 5 must match /^[A-Za-z0-9_-]{1,64}$/'],
    ['a numeric description', (root) => root.tools.register({ ...definition, description: 5 as never }), 'tool "fine" description must be a string'],
    ['array parameters', (root) => root.tools.register({ ...definition, parameters: [] as never }), 'tool "fine" parameters must be an object JSON schema'],
    ['string-typed parameters', (root) => root.tools.register({ ...definition, parameters: { type: 'string' } }), 'tool "fine" parameters must be an object JSON schema'],
    ['a missing execute', (root) => root.tools.register({ ...definition, execute: undefined as never }), 'tool "fine" execute must be a function'],
    ['a null section', (root) => root.systemPrompt.section(null as never), 'prompt section must be an object'],
    ['an unnamed section', (root) => root.systemPrompt.section({ name: '', order: 1, text: 'x' }), 'prompt section name must be a non-empty string'],
    ['a NaN section order', (root) => root.systemPrompt.section({ name: 's', order: Number.NaN, text: 'x' }), 'prompt section "s" order must be a finite number'],
    ['an infinite section order', (root) => root.systemPrompt.section({ name: 's', order: Number.POSITIVE_INFINITY, text: 'x' }), 'prompt section "s" order must be a finite number'],
    ['a string section order', (root) => root.systemPrompt.section({ name: 's', order: '1' as never, text: 'x' }), 'prompt section "s" order must be a finite number'],
    ['a numeric section text', (root) => root.systemPrompt.section({ name: 's', order: 1, text: 5 as never }), 'prompt section "s" text must be a string'],
    ['an empty provider', (root) => root.models.register('', { stream: () => [] as never }), 'model provider must be a non-empty string'],
    ['a numeric provider', (root) => root.models.register(5 as never, { stream: () => [] as never }), 'model provider must be a non-empty string'],
    ['an adapter without stream()', (root) => root.models.register('p', {} as never), 'model adapter for "p" must have a stream() method'],
    ['a null adapter', (root) => root.models.register('p', null as never), 'model adapter for "p" must have a stream() method'],
  ]
  for (const [what, call, message] of cases) {
    it(`rejects ${what} with a TypeError, registering nothing`, async () => {
      const b = await boundary()
      const before = b.state()
      const error = throwOf(() => call(b.root))
      expect(error).to.be.instanceOf(TypeError)
      expect(error.message).to.equal(message)
      expect(b.state()).to.deep.equal(before)
      await b.close()
    })
  }

  it('rejects a duplicate tool name and keeps the first tool working', async () => {
    const b = await boundary()
    const before = b.state()
    const error = throwOf(() => b.root.tools.register({ ...definition, name: 'read', execute: () => 'impostor' }))
    expect(error.message).to.equal('tool "read" is already registered')
    expect(error.code).to.equal('DUPLICATE_TOOL')
    expect(b.state()).to.deep.equal(before)
    expect((await b.root.tools.execute({ name: 'read', arguments: {} })).content).to.deep.equal([{ type: 'text', text: 'read' }])
    await b.close()
  })

  it('treats __proto__, constructor and hasOwnProperty as ordinary names', async () => {
    const b = await boundary()
    const names = ['__proto__', 'constructor', 'hasOwnProperty']
    const offs = names.flatMap((name) => [
      b.root.tools.register({ ...definition, name, execute: () => name }),
      b.root.systemPrompt.section({ name, order: 60, text: `section ${name}` }),
      b.root.models.register(name, { stream: () => b.root.models.resolve('scripted')!.stream as never }),
    ])
    for (const name of names) {
      expect(b.root.tools.get(name)?.name).to.equal(name)
      expect((await b.root.tools.execute({ name, arguments: {} })).content).to.deep.equal([{ type: 'text', text: name }])
      expect(b.root.systemPrompt.assemble(b.parent).text).to.include(`section ${name}`)
      expect(b.root.models.resolve(name)).to.not.equal(undefined)
    }
    expect(b.root.tools.get('toString')).to.equal(undefined)
    expect(b.root.models.resolve('toString')).to.equal(undefined)
    for (const off of offs) off()
    expect(b.root.tools.get('__proto__')).to.equal(undefined)
    await b.close()
  })

  it('holds 10,000 tools scoped to one child and drops them all with it', async () => {
    const b = await boundary()
    const before = b.state()
    const parameters = { type: 'object' }
    const off = b.root.on('subagent/setup', (child: Agent) => {
      const tools = child.ctx.tools
      for (let i = 0; i < 10_000; i++) tools.register({ name: `tool_${i}`, description: 'One of many.', parameters, execute: () => i })
    })
    b.host.scripted.push({ toolCalls: [{ name: 'tool_9999', arguments: {} }] }, { text: 'used one' })
    const run = await b.root.inprocessRun.spawn(b.request({ toolFilter: { allow: ['read'] } }))
    off()
    expect((await settles(run.result, 'run.result')).stopReason).to.equal('completed')
    const request = b.host.scripted.requests.at(-1)!
    expect(request.tools).to.have.length(10_001)
    const recorded = run.agent.session.events.find((event) => event.type === 'tool/result')?.data
    expect(recorded).to.deep.include({ isError: false, content: [{ type: 'text', text: '9999' }] })
    await run.dispose()
    expect(b.root.tools.get('tool_0', run.agent)).to.equal(undefined)
    expect(b.state()).to.deep.equal(before)
    await b.close()
  })

  it('registers and removes 10,000 global tools, keeping the list sorted and whole', async () => {
    const b = await boundary()
    const before = b.state()
    const parameters = { type: 'object' }
    const offs: (() => void)[] = []
    for (let i = 0; i < 10_000; i++) offs.push(b.root.tools.register({ name: `t${String(9_999 - i).padStart(4, '0')}`, description: 'x', parameters, execute: () => i }))
    const names = b.root.tools.schemas().map((schema) => schema.name)
    expect(names).to.have.length(10_001)
    expect(names).to.deep.equal([...names].sort())
    for (const off of offs) off()
    expect(b.state()).to.deep.equal(before)
    await b.close()
  })
})

describe('boundary: plugin configs', () => {
  const cases: [string, Plugin, unknown, RegExp][] = [
    ['DepthPolicy with a negative maxDepth', DepthPolicy, { maxDepth: -1 }, /maxDepth/],
    ['DepthPolicy with a fractional maxDepth', DepthPolicy, { maxDepth: 1.5 }, /maxDepth/],
    ['DepthPolicy with a string maxDepth', DepthPolicy, { maxDepth: 'deep' }, /maxDepth/],
    ['DepthPolicy with a number for a config', DepthPolicy, 5, /expected object/],
    ['Host with maxSteps 0', Host as Plugin, { maxSteps: 0 }, /maxSteps/],
    ['ScriptedModel with a numeric provider', ScriptedModel as Plugin, { provider: 5 }, /provider/],
  ]
  for (const [what, plugin, config, pattern] of cases) {
    it(`rejects ${what} with a validation error naming the field, and applies nothing`, async () => {
      const b = await boundary()
      const before = b.state()
      const fiber = b.root.plugin(plugin, config as never)
      const error = await rejectionOf(Promise.resolve(fiber))
      expect(error.message).to.match(pattern)
      // the failed plugin registered nothing; cordis keeps its fiber (failed) until disposed
      expect({ ...b.state(), snapshot: { ...b.state().snapshot, fibers: before.snapshot.fibers } }).to.deep.equal(before)
      await fiber.dispose()
      expect(b.state()).to.deep.equal(before)
      if (plugin === DepthPolicy) {
        b.host.scripted.push({ text: 'uncapped' })
        const child = await b.root.inprocessRun.spawn(b.request())
        await child.dispose()
      }
      await b.close()
    })
  }

  it('reads only the own keys of a DepthPolicy config: a __proto__ key changes no cap', async () => {
    const b = await boundary()
    const fiber = b.root.plugin(DepthPolicy, JSON.parse('{"__proto__":{"maxDepth":0}}'))
    await fiber
    expect(({} as Record<string, unknown>).maxDepth).to.equal(undefined)
    b.host.scripted.push({ text: 'allowed at the default cap of 3' })
    const run = await b.root.inprocessRun.spawn(b.request())
    expect((await settles(run.result, 'run.result')).stopReason).to.equal('completed')
    await run.dispose()
    await fiber.dispose()
    await b.close()
  })

  it('keeps running children when a config update is rejected', async () => {
    const b = await boundary()
    const fiber = b.root.plugin(DepthPolicy, { maxDepth: 2 })
    await fiber
    b.host.scripted.push('hang')
    const run = await b.root.inprocessRun.spawn(b.request())
    expect(() => fiber.update({ maxDepth: -5 })).to.throw(/maxDepth/)
    let error: Error | undefined
    await b.root.inprocessRun.spawn(b.request({ parent: run.agent, maxDepth: 5 })).then(
      (child) => child.dispose(),
      (e) => (error = e),
    )
    // the old cap (2) still holds: a grandchild (depth 2) is allowed
    expect(error).to.equal(undefined)
    await run.dispose()
    expect((await run.result).stopReason).to.equal('aborted')
    await fiber.dispose()
    await b.close()
  })
})
