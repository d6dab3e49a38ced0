/**
 * Load, not part of the default `npm test`: 10,000 concurrent runs in one process — spawns
 * and forks, some structured, some with a persona and tool filter — held live together inside the
 * model, then seeded-random cancellations (signal aborts, some before the start fulfils) and early
 * disposals. All runs settle with the reason their fate allows; afterwards agents and sessions are
 * zero, listeners and fibers are back at baseline and the heap (measured after forced GC) is back
 * near its baseline. Skipped unless gc is exposed: run it with `npm run test:stress`. Set
 * RELIABILITY_REPORT=1 to print the numbers, LOAD_RUNS=<n> to change the number of runs.
 */
import { expect } from 'chai'
import { Context } from 'cordis'
import type { Agent, AgentHandle, ModelRequest, StreamPart, SubagentResult, SubagentRun, SubagentStartRequest } from '../../lib/types.ts'
import DepthPolicy from '../../plugins/depth-policy/index.ts'
import { Host } from '../../plugins/host/index.ts'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import { ScriptedModel } from '../../plugins/scripted-model/index.ts'
import { answerSchema, StructuredOutput } from '../reliability/probe.ts'
import '../support/unhandled.ts'

const RUNS = Number(process.env.LOAD_RUNS ?? 10_000)
const PARENTS = 50
const SEED = 0x5eed

/** mulberry32: a small deterministic PRNG, so a failing mix can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

type Fate = 'complete' | 'abort at start' | 'abort while live' | 'dispose while live'

interface Planned {
  fate: Fate
  mode: 'spawn' | 'fork'
  structured: boolean
  scoped: boolean
}

function gc(): void {
  const collect = (globalThis as { gc?: () => void }).gc
  if (!collect) throw new Error('run the load suite with --expose-gc (see the test:stress script)')
  collect()
  collect()
}

function heapMiB(): number {
  gc()
  return process.memoryUsage().heapUsed / 2 ** 20
}

function count(root: Context): { listeners: number; fibers: number } {
  const hooks = (root.events as unknown as { _hooks: Record<string, unknown[]> })._hooks
  let listeners = 0
  for (const name of Object.keys(hooks)) listeners += hooks[name].length
  let fibers = 0
  for (const runtime of root.registry.values()) fibers += runtime.fibers.length
  return { listeners, fibers }
}

/** Where every live child waits, inside its first model call, until the test opens the hold. */
class Hold {
  waiting = 0
  peak = 0
  #target = Number.POSITIVE_INFINITY
  #reached?: () => void
  #release!: () => void
  readonly #opened = new Promise<void>((resolve) => (this.#release = resolve))

  /** Resolves once `n` children wait at the same time. */
  until(n: number): Promise<void> {
    this.#target = n
    return new Promise<void>((resolve) => {
      this.#reached = resolve
      this.#check()
    })
  }

  open(): void {
    this.#release()
  }

  /** Waits for `open()`; honours the request signal. */
  enter(signal: AbortSignal): Promise<void> {
    this.waiting++
    this.peak = Math.max(this.peak, this.waiting)
    this.#check()
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => reject(signal.reason)
      signal.addEventListener('abort', onAbort, { once: true })
      this.#opened.then(() => {
        signal.removeEventListener('abort', onAbort)
        resolve()
      })
    }).finally(() => void this.waiting--)
  }

  #check(): void {
    if (this.waiting >= this.#target) this.#reached?.()
  }
}

/** Model steps this turn has taken so far: assistant messages after the last user message. */
function stepsTaken(request: ModelRequest): number {
  let steps = 0
  for (let i = request.messages.length - 1; i >= 0 && request.messages[i].role !== 'user'; i--) {
    if (request.messages[i].role === 'assistant') steps++
  }
  return steps
}

interface RoundReport {
  held: number
  rejectedAtStart: number
  tally: Record<string, number>
  elapsedMs: number
}

describe('load: 10,000 concurrent runs in one process', function () {
  this.timeout(600_000)

  // part of `npm run test:stress` (which exposes gc), not of the default `npm test`
  before(function () {
    if (typeof (globalThis as { gc?: unknown }).gc !== 'function') this.skip()
  })

  it('settles every run, and returns agents, sessions, listeners, fibers and heap to baseline', async () => {
    const root = new Context()
    await root.plugin(Host, { maxSteps: 8 })
    await root.plugin(ScriptedModel, { provider: 'scripted', record: false })
    await root.plugin(InProcessRun)
    await root.plugin(DepthPolicy, { maxDepth: 3 })
    if (StructuredOutput) await root.plugin(StructuredOutput)
    root.tools.register({ name: 'lookup', description: 'Looks something up.', parameters: { type: 'object' }, execute: () => ({ found: true }) })
    root.tools.register({ name: 'other', description: 'Hidden from filtered children.', parameters: { type: 'object' }, execute: () => 'no' })

    let gate = new Hold()
    root.models.register('load', {
      async *stream(request: ModelRequest): AsyncGenerator<StreamPart> {
        if (stepsTaken(request) === 0) {
          await gate.enter(request.signal)
          yield { type: 'text-delta', text: 'checking' }
          yield { type: 'tool-call', id: 'c1', name: 'lookup', arguments: '{}' }
          yield { type: 'finish', reason: 'tool-calls', usage: { inputTokens: 10, outputTokens: 2 } }
          return
        }
        await Promise.resolve()
        if (request.tools?.some((tool) => tool.name === 'structured_output')) {
          yield { type: 'tool-call', id: 'c2', name: 'structured_output', arguments: '{"answer":42}' }
          yield { type: 'finish', reason: 'tool-calls', usage: { inputTokens: 12, outputTokens: 3 } }
        } else {
          yield { type: 'text-delta', text: 'found it' }
          yield { type: 'finish', reason: 'stop', usage: { inputTokens: 12, outputTokens: 3 } }
        }
      },
    })

    const warnings: Error[] = []
    const onWarning = (warning: Error) => warnings.push(warning)
    process.on('warning', onWarning)

    const parents: AgentHandle[] = []
    for (let i = 0; i < PARENTS; i++) {
      const handle = await root.agents.create({ agentOptions: { provider: 'scripted', model: 'test' } })
      root.scripted.push({ text: `parent ${i} answered` })
      handle.agent.followup('an earlier question')
      await handle.agent.whenIdle()
      // made lazily by the first child with a scope of its own; counted in the baseline
      void handle.agent.ctx
      parents.push(handle)
    }
    const baseline = count(root)

    /** Starts RUNS runs, holds them live together, cancels some, settles and disposes all. */
    const round = async (seed: number): Promise<RoundReport> => {
      gate = new Hold()
      const started = performance.now()
      const next = random(seed)
      const plans: Planned[] = []
      for (let i = 0; i < RUNS; i++) {
        const roll = next()
        const fate: Fate = roll < 0.1 ? 'abort at start' : roll < 0.3 ? 'abort while live' : roll < 0.45 ? 'dispose while live' : 'complete'
        plans.push({ fate, mode: next() < 0.5 ? 'spawn' : 'fork', structured: !!StructuredOutput && next() < 0.3, scoped: next() < 0.3 })
      }

      const controllers: AbortController[] = []
      const starts: Promise<SubagentRun>[] = []
      for (let i = 0; i < RUNS; i++) {
        const plan = plans[i]
        const controller = new AbortController()
        controllers.push(controller)
        const request: SubagentStartRequest = {
          parent: parents[i % PARENTS].agent as Agent,
          prompt: `task ${i}`,
          signal: controller.signal,
          label: `run ${i}`,
          agentOptions: { provider: 'load', model: 'load-1' },
          ...(plan.structured ? { outputSchema: answerSchema } : {}),
          ...(plan.scoped ? { persona: 'You are one of many.', toolFilter: { allow: ['lookup'] } } : {}),
        }
        starts.push(plan.mode === 'fork' ? root.inprocessRun.fork(request) : root.inprocessRun.spawn(request))
        if (plan.fate === 'abort at start') controller.abort()
      }

      const outcomes = await Promise.allSettled(starts)
      let rejectedAtStart = 0
      for (let i = 0; i < RUNS; i++) {
        const outcome = outcomes[i]
        if (outcome.status === 'fulfilled') continue
        rejectedAtStart++
        // only an abort during the setup window may reject a start
        expect(plans[i].fate, `run ${i} rejected: ${String(outcome.reason)}`).to.equal('abort at start')
        expect((outcome.reason as Error).name).to.equal('AbortError')
      }

      const live = outcomes.filter((outcome, i) => outcome.status === 'fulfilled' && plans[i].fate !== 'abort at start').length
      await gate.until(live)
      const held = gate.waiting
      expect(held, 'runs held live at once').to.equal(live)

      const disposals: Promise<void>[] = []
      for (let i = 0; i < RUNS; i++) {
        const outcome = outcomes[i]
        if (outcome.status !== 'fulfilled') continue
        if (plans[i].fate === 'abort while live') controllers[i].abort()
        else if (plans[i].fate === 'dispose while live') disposals.push(outcome.value.dispose())
      }
      gate.open()

      const tally: Record<string, number> = {}
      const results = await Promise.all(outcomes.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value.result : undefined)))
      for (let i = 0; i < RUNS; i++) {
        const result = results[i] as SubagentResult | undefined
        if (!result) continue
        const plan = plans[i]
        const key = `${plan.fate}: ${result.stopReason}`
        tally[key] = (tally[key] ?? 0) + 1
        if (plan.fate === 'complete') {
          expect(result.stopReason, `run ${i}`).to.equal('completed')
          if (plan.structured) expect(result.structured, `run ${i}`).to.deep.equal({ answer: 42 })
          else expect(result.output, `run ${i}`).to.deep.equal([{ type: 'text', text: 'found it' }])
        } else {
          expect(result.stopReason, `run ${i} (${plan.fate})`).to.equal('aborted')
        }
      }
      await Promise.all(disposals)
      await Promise.all(outcomes.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value.dispose() : undefined)))
      const elapsedMs = Math.round(performance.now() - started)
      expect(gate.waiting, 'children still waiting in the model').to.equal(0)
      expect(root.agents.list().length, 'agents after disposing every run').to.equal(PARENTS)
      expect(root.sessions.list().length, 'sessions after disposing every run').to.equal(PARENTS)
      expect(count(root), 'listeners and fibers after disposing every run').to.deep.equal(baseline)
      return { held, rejectedAtStart, tally, elapsedMs }
    }

    const heap = [heapMiB()]
    const rounds: RoundReport[] = []
    for (const seed of [SEED, SEED + 1]) {
      rounds.push(await round(seed))
      heap.push(heapMiB())
    }
    await Promise.all(parents.map((parent) => parent.dispose()))
    parents.length = 0
    expect(root.agents.list().length).to.equal(0)
    expect(root.sessions.list().length).to.equal(0)
    process.off('warning', onWarning)
    expect(warnings.map(String), 'process warnings').to.deep.equal([])

    const heapMiBs = heap.map((value) => +value.toFixed(1))
    if (process.env.RELIABILITY_REPORT) console.log(`load: ${JSON.stringify({ runs: RUNS, rounds, heapMiBs })}`)
    // the first round warms caches (ajv validators, JIT, cordis tables); a second may not grow the heap
    expect(heap[1] - heap[0], `heap ${heapMiBs.join(' → ')} MiB`).to.be.below(16)
    expect(heap[2] - heap[1], `heap ${heapMiBs.join(' → ')} MiB`).to.be.below(2)
  })
})
