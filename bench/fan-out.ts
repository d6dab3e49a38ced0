/**
 * Fan-out (SPEC §8.1): a parent whose model asks for N `subagent` calls in one step, each
 * child's model answering `ok` after D ms (D = 0: at once, no timer). For N = 8, 64, 1000 and
 * D = 0, 50: the median wall time of the parent's turn (the fan-out step plus one final step), its
 * ratio to D, children per second at N = 1000 with D = 0, and heap per live child while 1000
 * children wait for their model. Prints one JSON line. Run: `npm run bench:fan-out`.
 */
import { Context } from 'cordis'
import type { ModelRequest, StreamPart } from '../lib/types.ts'
import { Host } from '../plugins/host/index.ts'
import InProcessRun from '../plugins/inprocess-run/index.ts'
import SubagentTool from '../plugins/subagent-tool/index.ts'
import { fullGc } from './heap.ts'
import { printSummary, runBenchmark } from './report.ts'
import { median } from './stats.ts'

const quick = process.argv.includes('--quick')
const rounds = quick ? 2 : 5
const log = (message: string) => process.stderr.write(`${message}\n`)


const usage = { inputTokens: 16, outputTokens: 1 }

async function main(): Promise<void> {
  const started = performance.now()
  const root = new Context()
  await root.plugin(Host, { maxSteps: 32 })
  await root.plugin(InProcessRun)
  await root.plugin(SubagentTool, {} as SubagentTool.Config)

  let fanOut = 0
  let delay = 0
  let parentId = ''
  let waiting = 0
  let onWaiting: (() => void) | undefined
  root.models.register('fan', {
    async *stream(request: ModelRequest): AsyncGenerator<StreamPart> {
      if (request.agent.id === parentId) {
        if (request.messages.at(-1)?.role === 'tool') {
          yield { type: 'text-delta', text: 'done' }
        } else {
          for (let i = 1; i <= fanOut; i++) {
            yield { type: 'tool-call', id: `call_${i}`, name: 'subagent', arguments: JSON.stringify({ prompt: `task ${i}` }) }
          }
        }
        yield { type: 'finish', reason: 'stop', usage }
        return
      }
      if (delay > 0) {
        waiting++
        if (waiting === fanOut) onWaiting?.()
        await new Promise((resolve) => setTimeout(resolve, delay))
        waiting--
      }
      yield { type: 'text-delta', text: 'ok' }
      yield { type: 'finish', reason: 'stop', usage }
    },
  })

  const turn = async (n: number, d: number, beforeAnswers?: () => Promise<void>): Promise<number> => {
    fanOut = n
    delay = d
    const handle = await root.agents.create({ agentOptions: { provider: 'fan', model: 'fan-1' } })
    parentId = handle.agent.id
    const allWaiting = beforeAnswers && new Promise<void>((resolve) => (onWaiting = resolve))
    const t0 = performance.now()
    handle.agent.followup('fan out')
    if (allWaiting) {
      await allWaiting
      await beforeAnswers!()
    }
    await handle.agent.whenIdle()
    const wall = performance.now() - t0
    onWaiting = undefined
    const results = handle.agent.session.events.filter((event) => event.type === 'tool/result')
    const wrong = results.find((event) => (event.data as { isError: boolean }).isError)
    if (results.length !== n || wrong) throw new Error(`fan-out of ${n} returned ${results.length} results, ${wrong ? 'one an error' : 'no error'}`)
    await handle.dispose()
    if (root.agents.list().length) throw new Error('a fan-out left agents behind')
    return wall
  }

  const figures: Record<string, number> = {}
  const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits
  for (const n of [8, 64, 1000]) {
    for (const d of [0, 50]) {
      log(`bench: fan-out of ${n}, child model after ${d} ms`)
      await turn(n, d)
      const samples: number[] = []
      for (let i = 0; i < rounds; i++) {
        await fullGc()
        samples.push(await turn(n, d))
      }
      const wall = median(samples)
      figures[`fan_out_${n}_d${d}_turn_ms`] = round(wall)
      if (d > 0) figures[`fan_out_${n}_d${d}_ratio_to_d`] = round(wall / d, 2)
      if (n === 1000 && d === 0) figures.children_per_sec_1000_d0 = Math.round(n / (wall / 1000))
    }
  }

  log('bench: heap per live child during a fan-out of 1000')
  await fullGc()
  const h0 = process.memoryUsage().heapUsed
  let h1 = h0
  // a long answer delay, so no child finishes while the heap is measured
  await turn(1000, 2000, async () => {
    await fullGc()
    h1 = process.memoryUsage().heapUsed
  })
  figures.heap_bytes_per_live_child_fan_out_1000 = Math.round((h1 - h0) / 1000)

  printSummary(figures, started, quick)
}

runBenchmark(main)
