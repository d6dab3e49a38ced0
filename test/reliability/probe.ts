/**
 * The probe scene of the reliability suites: a host with the three driver plugins, a parent on the
 * scripted model, a child model route (`probe`) that yields control between stream parts, a global
 * tool whose body awaits, and an observer that numbers every point where a run can be interrupted.
 */
import { existsSync } from 'node:fs'
import { expect } from 'chai'
import type { Fiber, Plugin } from 'cordis'
import type { Agent, AgentHandle, JsonSchema, ModelRequest, StreamPart, SubagentResult, SubagentStartRequest } from '../../lib/types.ts'
import DepthPolicy from '../../plugins/depth-policy/index.ts'
import { scopeOf } from '../../plugins/host/scope.ts'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import { createHost, type Snapshot, type TestHost } from '../support/harness.ts'
import { installInvariants, type Invariants } from '../support/invariants.ts'

const structuredOutputUrl = new URL('../../plugins/structured-output/index.ts', import.meta.url)

/** `StructuredOutput`, when it exists in this checkout (it is still being finished elsewhere). */
export const StructuredOutput: Plugin | undefined = existsSync(structuredOutputUrl)
  ? ((await import(structuredOutputUrl.href)) as { default: Plugin }).default
  : undefined

export const answerSchema: JsonSchema = {
  type: 'object',
  properties: { answer: { type: 'integer' } },
  required: ['answer'],
  additionalProperties: false,
}

export interface Scenario {
  readonly name: string
  readonly mode: 'spawn' | 'fork'
  /** Starts with `outputSchema`; the child answers through `structured_output`. */
  readonly structured: boolean
  /**
   * The probe tool is concurrent and the child's first step calls it `probeCalls` times, so the
   * calls run as one batch (SPEC §8.1) and points fall with any number of them in flight.
   */
  readonly concurrent?: boolean
}

/** Calls of the probe tool in a concurrent scenario's first step. */
export const probeCalls = 3

/** A child model step: parts the probe adapter streams, one microtask apart. */
type Step = readonly StreamPart[]

const usage = { inputTokens: 3, outputTokens: 2 }

function childSteps({ structured, concurrent }: Scenario): readonly Step[] {
  const finalStep: Step = structured
    ? [
        { type: 'tool-call', id: 'call-answer', name: 'structured_output', arguments: '{"answer":7}' },
        { type: 'finish', reason: 'tool-calls', usage },
      ]
    : [
        { type: 'text-delta', text: 'the ' },
        { type: 'text-delta', text: 'answer' },
        { type: 'finish', reason: 'stop', usage },
      ]
  const probes: Step = concurrent
    ? Array.from({ length: probeCalls }, (_, i) => ({ type: 'tool-call', id: `call-probe-${i + 1}`, name: 'probe', arguments: `{"n":${i + 1}}` }))
    : [{ type: 'tool-call', id: 'call-probe', name: 'probe', arguments: '{"n":1}' }]
  return [[{ type: 'text-delta', text: 'looking' }, ...probes, { type: 'finish', reason: 'tool-calls', usage }], finalStep]
}

/** What a run of the scenario returns when nothing interferes. */
export function expectedResult(scenario: Scenario): SubagentResult {
  const total = { inputTokens: 6, outputTokens: 4 }
  return scenario.structured
    ? { output: [{ type: 'tool-call', id: 'call-answer', name: 'structured_output', arguments: '{"answer":7}' }], stopReason: 'completed', usage: total, structured: { answer: 7 } }
    : { output: [{ type: 'text', text: 'the answer' }], stopReason: 'completed', usage: total }
}

/** Resolves after `turns` turns of the event loop: enough for any microtask-only work to finish. */
export async function drain(turns = 3): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise<void>((resolve) => setImmediate(resolve))
}

/**
 * `promise`, or a failure naming `what` when it has not settled after a few event-loop turns. Every
 * model and tool of the probe scene is microtask-driven, so a promise still pending then never settles.
 */
export async function settles<T>(promise: Promise<T>, what: string): Promise<T> {
  let done = false
  const watched = promise.finally(() => {
    done = true
  })
  watched.catch(() => {})
  for (let i = 0; i < 20 && !done; i++) await new Promise<void>((resolve) => setImmediate(resolve))
  if (!done) expect.fail(`${what} never settled`)
  return watched
}

/** Fails unless the agent's scope holds no registration (tools, sections, hooks, guards, …). */
export function expectScopeCleared(agent: Agent, what: string): void {
  const scope = scopeOf(agent)
  if (!scope) return
  const left = (['tools', 'sections', 'hooks', 'guards', 'restrictions', 'models'] as const).filter((key) => scope[key] !== undefined)
  expect(left, `${what}: scoped registrations left`).to.deep.equal([])
}

interface Plugins {
  run: Fiber
  depth: Fiber
  structured?: Fiber
}

export interface ProbeScene {
  readonly host: TestHost
  readonly invariants: Invariants
  readonly plugins: Plugins
  readonly parent: AgentHandle
  /** After loading the plugins and the observer, before the parent existed. */
  readonly loaded: Snapshot
  /** `loaded` without the three driver plugins. */
  readonly bare: Snapshot
  /** Numbers a point; performs the trigger when its index is reached. Inactive until armed. */
  point(label: string): void
  readonly points: string[]
  arm(onPoint: (index: number) => void): void
  disarm(): void
  request(scenario: Scenario, signal: AbortSignal): SubagentStartRequest
  /** Unloads every driver plugin still loaded. */
  unloadAll(): Promise<void>
}

/** Builds the probe scene; for a fork, the parent first completes one turn on the scripted model. */
export async function probeScene(scenario: Scenario): Promise<ProbeScene> {
  const host = await createHost()
  const { root } = host
  const invariants = installInvariants(root)
  const points: string[] = []
  let onPoint: ((index: number) => void) | undefined
  const point = (label: string): void => {
    if (!onPoint) return
    points.push(label)
    onPoint(points.length - 1)
  }

  const calls = new Map<string, number>()
  const steps = childSteps(scenario)
  root.models.register('probe', {
    async *stream(request: ModelRequest): AsyncGenerator<StreamPart> {
      const index = calls.get(request.agent.id) ?? 0
      calls.set(request.agent.id, index + 1)
      const parts = steps[index]
      if (!parts) throw new Error('probe model has no more responses')
      for (const part of parts) {
        await Promise.resolve()
        point(`stream ${part.type}`)
        yield part
      }
    },
  })
  let inFlight = 0
  root.tools.register({
    name: 'probe',
    description: 'Probes something.',
    parameters: { type: 'object', properties: { n: { type: 'integer' } } },
    concurrent: scenario.concurrent === true,
    async execute() {
      inFlight++
      try {
        for (let i = 1; i <= 3; i++) {
          point(`tool body await ${i}`)
          if (scenario.concurrent) point(`probe calls in flight: ${inFlight}`)
          await Promise.resolve()
        }
        return { probed: true }
      } finally {
        inFlight--
      }
    },
  })
  root.tools.register({ name: 'other', description: 'Hidden from the child.', parameters: { type: 'object' }, execute: () => 'no' })

  const beforePlugins = host.snapshot()
  const plugins: Plugins = { run: root.plugin(InProcessRun), depth: root.plugin(DepthPolicy, { maxDepth: 3 }) }
  await plugins.run
  await plugins.depth
  if (StructuredOutput) await (plugins.structured = root.plugin(StructuredOutput))
  const afterPlugins = host.snapshot()

  root.on('subagent/setup', () => point('subagent/setup (first listener)'), true)
  // an asynchronous setup that registers into the child after two awaits
  root.on('subagent/setup', async (child) => {
    point('setup await 1')
    await Promise.resolve()
    point('setup await 2')
    await Promise.resolve()
    const ctx = child.ctx
    ctx.tools.register({ name: 'probe_scoped', description: 'Scoped to one child.', parameters: { type: 'object' }, execute: () => 'scoped' })
    ctx.systemPrompt.section({ name: 'probe-notes', order: 150, text: 'Probe notes for one child.' })
  })
  root.on('subagent/setup', () => point('subagent/setup (last listener)'))
  root.on('agent/created', () => point('agent/created'))
  root.on('subagent/start', () => point('subagent/start'))
  root.on('session/event', (_session, event) => point(`session/event ${event.type}`))
  root.on('agent/pre-step', (_agent, _info, next) => {
    point('agent/pre-step')
    return next()
  })
  root.on('system-prompt/assemble', (_assembly, _info, next) => {
    point('system-prompt/assemble')
    return next()
  })
  root.on('tools/pre-execute', (exec, next) => {
    point(`tools/pre-execute ${exec.name}`)
    return next()
  })
  root.on('tools/post-execute', (exec, _result, next) => {
    point(`tools/post-execute ${exec.name}`)
    return next()
  })
  root.on('tools/result', (exec) => point(`tools/result ${exec.name}`))
  root.on('subagent/settle', (_result, _run, next) => {
    point('subagent/settle')
    return next()
  })
  root.on('subagent/end', () => point('subagent/end'))
  root.on('agent/disposed', () => point('agent/disposed'))

  const loaded = host.snapshot()
  const bare: Snapshot = {
    ...loaded,
    listeners: loaded.listeners - (afterPlugins.listeners - beforePlugins.listeners),
    fibers: loaded.fibers - (afterPlugins.fibers - beforePlugins.fibers),
  }

  const parent = await root.agents.create({ agentOptions: { provider: 'scripted', model: 'test' } })
  if (scenario.mode === 'fork') {
    host.scripted.push({ text: 'earlier answer', usage: { inputTokens: 50, outputTokens: 50 } })
    parent.agent.followup('an earlier question')
    await parent.agent.whenIdle()
  }

  return {
    host,
    invariants,
    plugins,
    parent,
    loaded,
    bare,
    point,
    points,
    arm(callback) {
      onPoint = callback
    },
    disarm() {
      onPoint = undefined
    },
    request: (s, signal) => ({
      parent: parent.agent,
      prompt: 'probe the thing',
      signal,
      label: s.name,
      persona: 'You are a careful probe.',
      toolFilter: { allow: ['probe'] },
      agentOptions: { provider: 'probe', model: 'probe-1' },
      ...(s.structured ? { outputSchema: answerSchema } : {}),
    }),
    async unloadAll() {
      await Promise.all([plugins.run.dispose(), plugins.depth.dispose(), plugins.structured?.dispose()])
    },
  }
}
