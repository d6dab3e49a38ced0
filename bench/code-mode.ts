/**
 * What one `run_code` call costs through the host: the first call right after the plugin loads, a
 * trivial program, a program with one nested binding call, and one program on a worker started
 * for it (what the call after a timeout or an abort pays: that worker was terminated).
 * Prints one JSON line.
 * Run: `npm run bench:code-mode` (`--quick` scales the counts down for smoke runs).
 */
import { Context } from 'cordis'
import CodeMode, { runSandboxed, SandboxPool } from '../plugins/code-mode/index.ts'
import { Host } from '../plugins/host/index.ts'
import type { Agent } from '../lib/types.ts'
import { printSummary, runBenchmark } from './report.ts'
import { percentile } from './stats.ts'

const quick = process.argv.includes('--quick')
const warmup = quick ? 20 : 200
const count = quick ? 100 : 2000
const log = (message: string) => process.stderr.write(`${message}\n`)

/** Percentile p of sorted samples, as BENCH.md defines it. */

async function call(root: Context, agent: Agent, code: string, expected: unknown): Promise<void> {
  const result = await root.tools.execute({ name: 'run_code', arguments: { code }, agent })
  if (result.isError || JSON.stringify(result.value) !== JSON.stringify(expected)) {
    throw new Error(`run_code gave ${JSON.stringify(result)} for ${code}`)
  }
}

async function measure(label: string, body: () => Promise<void>): Promise<{ p50: number; p95: number }> {
  log(`bench: ${label}`)
  for (let i = 0; i < warmup; i++) await body()
  const samples = new Array<number>(count)
  for (let i = 0; i < count; i++) {
    const t0 = performance.now()
    await body()
    samples[i] = (performance.now() - t0) * 1000
  }
  samples.sort((a, b) => a - b)
  return { p50: percentile(samples, 50), p95: percentile(samples, 95) }
}

/** Median of a trivial program on a pool with no worker yet (the wasm is compiled by then). */
async function freshWorkerCall(): Promise<number> {
  log('bench: one program on a new worker')
  const samples: number[] = []
  for (let i = 0; i < (quick ? 3 : 9); i++) {
    const pool = new SandboxPool()
    const t0 = performance.now()
    const outcome = await runSandboxed({ code: 'return 1', bindings: {}, pool })
    samples.push((performance.now() - t0) * 1000)
    await pool.dispose()
    if (!outcome.ok) throw new Error(`a fresh worker gave ${outcome.error}`)
  }
  samples.sort((a, b) => a - b)
  return percentile(samples, 50)
}

async function main(): Promise<void> {
  const started = performance.now()
  const root = new Context()
  await root.plugin(Host)
  root.tools.register({ name: 'echo', description: 'echo', parameters: { type: 'object' }, execute: (args: unknown) => args as object })
  const fiber = root.plugin(CodeMode)
  await fiber
  const { agent, dispose } = await root.agents.create({})

  const t0 = performance.now()
  await call(root, agent, 'return 1', 1)
  const first = (performance.now() - t0) * 1000

  const trivial = await measure('trivial program', () => call(root, agent, 'return 1', 1))
  const nested = await measure('one nested binding call', () => call(root, agent, 'return (await tools.echo({ n: 1 })).n', 1))
  await dispose()
  await fiber.dispose()
  const fresh = await freshWorkerCall()

  const round = (value: number) => Math.round(value * 10) / 10
  printSummary(
    {
      first_call_us: round(first),
      trivial_p50_us: round(trivial.p50),
      trivial_p95_us: round(trivial.p95),
      nested_call_p50_us: round(nested.p50),
      nested_call_p95_us: round(nested.p95),
      fresh_worker_call_p50_us: round(fresh),
    },
    started,
    quick,
  )
}

runBenchmark(main)
