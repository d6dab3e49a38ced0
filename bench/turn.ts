/**
 * Host costs: one scripted turn on an existing agent, one create → turn → dispose cycle of a plain
 * agent, the same cycle with one scoped registration, turns whose first step calls one tool, four
 * sequential tools and four concurrent tools, and a bare cordis fiber create + dispose measured in
 * the same process for scale. Prints one JSON line. Run: `npm run bench:turn`.
 */
import type { Context } from 'cordis'
import type { ModelRequest } from '../lib/types.ts'
import { printSummary, runBenchmark } from './report.ts'
import { scriptedHost } from './scripted-host.ts'
import { median } from './stats.ts'

const quick = process.argv.includes('--quick')
const count = quick ? 500 : 10000
const log = (message: string) => process.stderr.write(`${message}\n`)


async function measure(label: string, body: () => Promise<void>): Promise<number> {
  log(`bench: ${label}`)
  for (let i = 0; i < Math.ceil(count / 5); i++) await body()
  const samples = new Array<number>(count)
  for (let i = 0; i < count; i++) {
    const t0 = performance.now()
    await body()
    samples[i] = (performance.now() - t0) * 1000
  }
  return median(samples)
}

function liveFibers(root: Context): number {
  let total = 0
  for (const runtime of root.registry.values()) total += runtime.fibers.length
  return total
}

async function main(): Promise<void> {
  const started = performance.now()
  const root = await scriptedHost()
  const usage = { inputTokens: 16, outputTokens: 1 }
  const answer = { text: 'ok', usage }
  const calls = (name: string, n: number) => ({
    toolCalls: Array.from({ length: n }, (_, i) => ({ id: `c${i + 1}`, name, arguments: '{}' })),
    usage,
  })
  // the model name picks the first step; every step after a tool result answers `ok`
  const firstSteps: Record<string, ReturnType<typeof calls>> = {
    'one-call': calls('echo', 1),
    'four-calls': calls('echo', 4),
    'four-concurrent-calls': calls('echo_concurrent', 4),
  }
  root.scripted.repeat((request: ModelRequest) => {
    const first = firstSteps[request.model]
    return first && request.messages.at(-1)?.role !== 'tool' ? first : answer
  })
  const agents = root.agents
  const options = { agentOptions: { provider: 'scripted', model: 'bench' } }

  // a turn on an existing agent; agents are rotated every 100 turns so history stays short
  let current = await agents.create(options)
  let turns = 0
  const turn = await measure('turn on an existing agent', async () => {
    if (++turns % 100 === 0) {
      await current.dispose()
      current = await agents.create(options)
    }
    current.agent.followup('go')
    await current.agent.whenIdle()
  })
  await current.dispose()

  const fibersBefore = liveFibers(root)
  const plain = await measure('plain create → turn → dispose', async () => {
    const handle = await agents.create(options)
    handle.agent.followup('go')
    await handle.agent.whenIdle()
    await handle.dispose()
  })
  if (liveFibers(root) !== fibersBefore) throw new Error('a plain cycle left a fiber behind')

  const tool = { name: 'echo', description: 'echo', parameters: { type: 'object' }, execute: () => 'echo' }
  const scoped = await measure('create → scoped registration → turn → dispose', async () => {
    const handle = await agents.create(options)
    handle.agent.ctx.tools.register(tool)
    handle.agent.followup('go')
    await handle.agent.whenIdle()
    await handle.dispose()
  })

  // global tools from here on: the turns above see no tool schemas
  root.tools.register({ ...tool, execute: async () => 'echo' })
  const concurrentTool = { ...tool, name: 'echo_concurrent', concurrent: true, execute: async () => 'echo' }
  root.tools.register(concurrentTool)
  const toolTurn = async (model: string): Promise<number> => {
    let handle = await agents.create({ agentOptions: { provider: 'scripted', model } })
    let count = 0
    const p50 = await measure(`turn with ${model}`, async () => {
      if (++count % 100 === 0) {
        await handle.dispose()
        handle = await agents.create({ agentOptions: { provider: 'scripted', model } })
      }
      handle.agent.followup('go')
      await handle.agent.whenIdle()
    })
    await handle.dispose()
    return p50
  }
  const oneCall = await toolTurn('one-call')
  const fourCalls = await toolTurn('four-calls')
  const fourConcurrent = await toolTurn('four-concurrent-calls')

  const bare = await measure('bare cordis fiber (one listener, one effect)', async () => {
    const fiber = root.plugin((ctx: Context) => {
      ctx.on('bench/none' as never, (() => {}) as never)
      ctx.effect(() => () => {})
    })
    await fiber
    await fiber.dispose()
  })

  const round = (value: number) => Math.round(value * 10) / 10
  printSummary(
    {
      turn_p50_us: round(turn),
      plain_cycle_p50_us: round(plain),
      scoped_cycle_p50_us: round(scoped),
      one_call_turn_p50_us: round(oneCall),
      four_calls_turn_p50_us: round(fourCalls),
      four_concurrent_calls_turn_p50_us: round(fourConcurrent),
      bare_fiber_cycle_p50_us: round(bare),
      scoped_vs_bare_fiber: round(scoped / bare * 100) / 100,
    },
    started,
    quick,
  )
}

runBenchmark(main)
