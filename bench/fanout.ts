/**
 * Fan-out (SPEC §8.1, issue 10): a parent whose model asks for N `subagent` calls in one step
 * (N = 8, 64, 1,000), each child's model answering after D ms (D = 0 and 50). Reports the median
 * wall time of that step's tool phase (from the parent's tool-call message to its last tool
 * result), its ratio to D, children per second at N = 1,000 with D = 0, and the heap per live child
 * while 1,000 children wait at once. Prints one JSON line. Run: `npm run bench:fanout`.
 */
import { Context } from 'cordis'
import type { Agent, ModelAdapter, ModelRequest, SessionEvent, StreamPart } from '../lib/types.ts'
import { Host } from '../plugins/host/index.ts'
import { InProcessRun } from '../plugins/inprocess-run/index.ts'
import { SubagentTool } from '../plugins/subagent-tool/index.ts'

const quick = process.argv.includes('--quick')
const log = (message: string) => process.stderr.write(`${message}\n`)
const usage = { inputTokens: 16, outputTokens: 1 }

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b)
  return sorted[Math.ceil(sorted.length / 2) - 1]
}

async function fullGc(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc
  if (!gc) throw new Error('run with --expose-gc')
  for (let i = 0; i < 3; i++) gc()
  await new Promise(setImmediate)
}

/** What the children of the current case do before they answer. */
interface ChildPlan {
  delayMs: number
  /** When set, children wait for it instead of a timer (heap phase). */
  gate?: Promise<void>
  entered: number
  onEntered?: (count: number) => void
}

function fanoutModel(plan: { fanout: number; child: ChildPlan }): ModelAdapter {
  return {
    async *stream(request: ModelRequest): AsyncGenerator<StreamPart> {
      const isChild = (request.agent.session.header.delegationDepth ?? 0) > 0
      if (isChild) {
        const child = plan.child
        child.onEntered?.(++child.entered)
        if (child.gate) await child.gate
        else if (child.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, child.delayMs))
        yield { type: 'text-delta', text: 'ok' }
        yield { type: 'finish', reason: 'stop', usage }
        return
      }
      if (request.messages.at(-1)?.role === 'tool') {
        yield { type: 'text-delta', text: 'all done' }
        yield { type: 'finish', reason: 'stop', usage }
        return
      }
      for (let i = 0; i < plan.fanout; i++) {
        yield { type: 'tool-call', id: `call_${i}`, name: 'subagent', arguments: JSON.stringify({ prompt: `task ${i}`, label: `task ${i}` }) }
      }
      yield { type: 'finish', reason: 'tool-calls', usage }
    },
  }
}

interface Timing {
  stepMs: number
  turnMs: number
}

/** One parent turn that fans out; checks every child completed. */
async function fanOut(root: Context, parent: Agent, fanout: number): Promise<Timing> {
  let callsAt = 0
  let lastResultAt = 0
  let failures = 0
  const from = parent.session.events.length
  const off = root.on('session/event', (session, event: SessionEvent) => {
    if (session.id !== parent.id) return
    if (event.type === 'assistant/message' && callsAt === 0) callsAt = performance.now()
    else if (event.type === 'tool/result') {
      lastResultAt = performance.now()
      if ((event.data as { isError: boolean }).isError) failures++
    }
  })
  const t0 = performance.now()
  parent.followup('fan out')
  await parent.whenIdle()
  const turnMs = performance.now() - t0
  off()
  const results = parent.session.events.slice(from).filter((event) => event.type === 'tool/result').length
  if (results !== fanout || failures) throw new Error(`fan-out of ${fanout}: ${results} results, ${failures} errors`)
  return { stepMs: lastResultAt - callsAt, turnMs }
}

async function main(): Promise<void> {
  const started = performance.now()
  const root = new Context()
  await root.plugin(Host, { maxSteps: 4 })
  await root.plugin(InProcessRun)
  await root.plugin(SubagentTool, {})
  const plan = { fanout: 0, child: { delayMs: 0, entered: 0 } as ChildPlan }
  root.models.register('fanout', fanoutModel(plan))
  const { agent: parent, dispose } = await root.agents.create({ agentOptions: { provider: 'fanout', model: 'bench' } })

  const cases: { fanout: number; delayMs: number }[] = []
  for (const fanout of [8, 64, 1000]) for (const delayMs of [0, 50]) cases.push({ fanout, delayMs })
  const runs: { n: number; delayMs: number; stepMs: number; turnMs: number; ratioToDelay?: number; repeats: number }[] = []
  for (const { fanout, delayMs } of cases) {
    const repeats = quick ? 2 : fanout >= 1000 ? 5 : 15
    log(`bench: N=${fanout} D=${delayMs} ×${repeats}`)
    plan.fanout = fanout
    plan.child = { delayMs, entered: 0 }
    await fanOut(root, parent, fanout) // warm-up, untimed
    const steps: number[] = []
    const turns: number[] = []
    for (let i = 0; i < repeats; i++) {
      const timing = await fanOut(root, parent, fanout)
      steps.push(timing.stepMs)
      turns.push(timing.turnMs)
    }
    const stepMs = median(steps)
    runs.push({
      n: fanout,
      delayMs,
      stepMs: Math.round(stepMs * 100) / 100,
      turnMs: Math.round(median(turns) * 100) / 100,
      ...(delayMs > 0 ? { ratioToDelay: Math.round((stepMs / delayMs) * 100) / 100 } : {}),
      repeats,
    })
  }
  const fastest = runs.find((run) => run.n === 1000 && run.delayMs === 0)!
  const childrenPerSecond = Math.round(1000 / (fastest.stepMs / 1000))

  // heap per live child: 1,000 children held at their model call, measured after a full GC
  log('bench: heap with 1000 live children')
  const heapFanout = 1000
  plan.fanout = heapFanout
  let release!: () => void
  const gate = new Promise<void>((resolve) => (release = resolve))
  let allEntered!: () => void
  const entered = new Promise<void>((resolve) => (allEntered = resolve))
  plan.child = { delayMs: 0, entered: 0, gate, onEntered: (count) => count === heapFanout && allEntered() }
  await fullGc()
  const heapBefore = process.memoryUsage().heapUsed
  const turn = fanOut(root, parent, heapFanout)
  await entered
  await fullGc()
  const heapDuring = process.memoryUsage().heapUsed
  const liveChildren = root.agents.list().length - 1
  release()
  await turn
  if (liveChildren !== heapFanout) throw new Error(`expected ${heapFanout} live children, saw ${liveChildren}`)

  await dispose()
  process.stdout.write(
    `${JSON.stringify({
      bench: 'fanout',
      node: process.version,
      quick,
      runs,
      childrenPerSecondN1000D0: childrenPerSecond,
      heapPerLiveChildBytes: Math.round((heapDuring - heapBefore) / heapFanout),
      totalMs: Math.round(performance.now() - started),
    })}\n`,
  )
}

await main()
