/**
 * The peer (AI SDK 7 `generateText`, `../shared/peers/ai-sdk`) under BENCH.md's `steady` procedure,
 * which the peer's own runner does not report: one sanity cycle, 20,000 warm-up cycles, a full GC
 * (none with `--without-gc`), 10,000 timed cycles, through the peer's own adapter. It answers
 * whether the steady window's tail is ours or the procedure's.
 * Needs the peer installed where `bash ../shared/peers/ai-sdk/run.sh` puts it
 * (`${TMPDIR:-/tmp}/peer-ai-sdk`) and its Node 22 first on `PATH`:
 *   `PATH="$(dirname "$NODE22"):$PATH" node --expose-gc --import tsx bench/peer-steady.ts [--without-gc]`
 * Prints one JSON line: p50, p95, p99 (µs), p95 and p99 over p50, and each block of 1,000 window
 * cycles' p50.
 */
import { existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { fullGc } from './heap.ts'
import { printSummary, runBenchmark } from './report.ts'
import { percentile } from './stats.ts'

interface PeerAdapter {
  setup(variant: string): Promise<{
    run(child: undefined, n: number, signal: AbortSignal): Promise<unknown>
    check(result: unknown): void
  }>
}

const WARM_UP = 20000
const WINDOW = 10000
const BLOCK = 1000

async function main(): Promise<void> {
  const started = performance.now()
  const withoutGc = process.argv.includes('--without-gc')
  const adapterPath = join(process.env.TMPDIR ?? tmpdir(), 'peer-ai-sdk', 'adapter.mjs')
  if (!existsSync(adapterPath)) throw new Error(`the peer is not installed at ${adapterPath}: run bash ../shared/peers/ai-sdk/run.sh first`)
  const adapter = (await import(pathToFileURL(adapterPath).href)) as PeerAdapter
  const peer = await adapter.setup('generatetext')
  let n = 0
  const cycle = async (): Promise<number> => {
    const t0 = performance.now()
    peer.check(await peer.run(undefined, ++n, new AbortController().signal))
    return (performance.now() - t0) * 1000
  }
  await cycle() // sanity
  for (let i = 0; i < WARM_UP; i++) await cycle()
  if (withoutGc) await new Promise(setImmediate)
  else await fullGc()
  const samples: number[] = []
  for (let i = 0; i < WINDOW; i++) samples.push(await cycle())
  const blockP50 = []
  for (let start = 0; start < WINDOW; start += BLOCK) {
    const block = samples.slice(start, start + BLOCK).sort((a, b) => a - b)
    blockP50.push(Math.round(percentile(block, 50) * 10) / 10)
  }
  const sorted = [...samples].sort((a, b) => a - b)
  const [p50, p95, p99] = [50, 95, 99].map((p) => percentile(sorted, p)) as [number, number, number]
  const round = (value: number, places: number) => Math.round(value * 10 ** places) / 10 ** places
  printSummary(
    {
      cycle_p50_us_steady: round(p50, 1),
      cycle_p95_us_steady: round(p95, 1),
      cycle_p99_us_steady: round(p99, 1),
      p95_over_p50: round(p95 / p50, 2),
      p99_over_p50: round(p99 / p50, 2),
      block_p50_us: blockP50,
      window: `${WARM_UP} warm-up cycles, ${withoutGc ? 'no full GC' : 'a full GC'}`,
      peer: 'ai generateText (../shared/peers/ai-sdk/adapter.mjs)',
    },
    started,
    false,
  )
}

runBenchmark(main)
