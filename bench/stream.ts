/**
 * One agent, one turn, a scripted model streaming K text deltas then finishing. Prints
 * one JSON line: the turns' wall time per delta at K = 2,000 and K = 20,000 (blocks of 20,000
 * deltas, as 10 turns or one, alternating in one process; the mean over every block of a size, so
 * the collections V8 runs in the blocks are paid where they fall, and a median of the blocks beside
 * it), the heap still held per delta once the turn is over (agent alive) — with the texts shared with the
 * benchmark, and with a fresh string per delta as an adapter's parser makes them — and the
 * `SessionFiles` bytes written per delta. Per size, also what a block costs besides the turns'
 * own work (means over the blocks): the main thread's minor page faults (on the benchmark VM
 * each fresh page's first touch costs ≈ 18 µs: V8's large-object space maps fresh pages for every
 * object past 128 KB), and the scavenges inside the block with their summed duration (a scavenge
 * in the middle of a long turn copies what that turn holds so far), from `v8.GCProfiler`. Those
 * are read around the timed block, not subtracted from it: the per-delta figures include them.
 *
 * Nothing is collected by hand between blocks. A full collection before each block would, with
 * no turn alive, also free the hidden classes of every object a turn makes (transitions hold them
 * weakly), so the streaming path's optimized code would be thrown away before every block and
 * compiled again in its first ≈ 6,000 deltas (≈ 12 ms a block on this VM): a cost of the forced
 * collection, not of streaming. A scavenge before each block would leave a block's own garbage to
 * the next block's untimed scavenge: with ≈ 0.4 KB allocated per delta a block fits the young
 * generation, so no block would pay any collection. So a block pays the collections that fall in
 * it, about one every two blocks, and the mean spreads them over every delta as a host would see
 * them. Figures of the measurement log taken with a collection per block are not comparable.
 * Run: `npm run bench:stream` (`--quick` scales the rounds down for smoke runs).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { GCProfiler } from 'node:v8'
import { SessionFiles } from '../plugins/session-files/index.ts'
import { fullGc, heapAfterGc } from './heap.ts'
import { mainThreadFaults } from './main-thread.ts'
import { printSummary, runBenchmark } from './report.ts'
import { scriptedHost } from './scripted-host.ts'
import { median } from './stats.ts'

const quick = process.argv.includes('--quick')
const rounds = quick ? 3 : 25
const sizes: readonly number[] = [2000, 20000]
const log = (message: string) => process.stderr.write(`${message}\n`)



/** One timed block of 20,000 deltas. */
interface Block {
  usPerDelta: number
  faults: number | null
  scavenges: number
  scavengeMs: number
}

function mean(values: number[]): number {
  return values.reduce((sum, value) => sum + value, 0) / values.length
}


/** K distinct token-sized strings, as a model's stream would bring them. */
function pieces(k: number): string[] {
  return Array.from({ length: k }, (_, i) => ` t${i}`)
}

async function main(): Promise<void> {
  const started = performance.now()
  const root = await scriptedHost()
  const usage = { inputTokens: 16, outputTokens: 1 }
  const texts = new Map(sizes.map((k) => [k, pieces(k)]))
  const options = { agentOptions: { provider: 'scripted', model: 'bench' } }

  /**
   * One streaming turn on a new agent; returns its wall time in µs and the live handle. `fresh`:
   * each delta's text is a new string made while the model streams, held by nothing but the host.
   */
  const streamTurn = async (k: number, fresh = false) => {
    const handle = await root.agents.create(options)
    root.scripted.push(fresh ? () => ({ deltas: pieces(k), usage }) : { deltas: texts.get(k), usage })
    const t0 = performance.now()
    handle.agent.followup('stream')
    await handle.agent.whenIdle()
    const elapsed = (performance.now() - t0) * 1000
    const end = handle.agent.session.events.at(-1)
    if (end?.type !== 'turn/end' || (end.data as { reason: { kind: string } }).reason.kind !== 'completed') {
      throw new Error(`streaming turn did not complete: ${JSON.stringify(end)}`)
    }
    return { elapsed, handle }
  }

  log('bench: warm-up')
  for (let i = 0; i < 3; i++) for (const k of sizes) await (await streamTurn(k)).handle.dispose()

  // a block streams the same 20,000 deltas either way: as 10 turns of 2,000 or one turn of
  // 20,000, the sizes alternating; no collection by hand between blocks (see the header)
  const perBlock = 20000
  const blocks = new Map<number, Block[]>(sizes.map((k) => [k, []]))
  await fullGc()
  for (let round = 0; round < rounds; round++) {
    for (const k of round % 2 ? [...sizes].reverse() : sizes) {
      const profiler = new GCProfiler()
      const faultsBefore = mainThreadFaults()
      profiler.start()
      let elapsed = 0
      for (let turn = 0; turn < perBlock / k; turn++) {
        const streamed = await streamTurn(k)
        elapsed += streamed.elapsed
        await streamed.handle.dispose()
      }
      const scavenges = profiler.stop().statistics.filter((gc) => gc.gcType === 'Scavenge')
      const faultsAfter = mainThreadFaults()
      blocks.get(k)?.push({
        usPerDelta: elapsed / perBlock,
        faults: faultsBefore === null || faultsAfter === null ? null : faultsAfter - faultsBefore,
        scavenges: scavenges.length,
        // `cost` is in µs
        scavengeMs: scavenges.reduce((sum, gc) => sum + gc.cost, 0) / 1000,
      })
    }
    log(`bench: round ${round + 1}/${rounds}`)
  }
  const figures = (k: number) => {
    const list = blocks.get(k) ?? []
    const faults = list.map((block) => block.faults)
    return {
      [`stream_delta_us_k${k}`]: round3(mean(list.map((block) => block.usPerDelta))),
      [`stream_delta_us_median_k${k}`]: round3(median(list.map((block) => block.usPerDelta))),
      [`stream_faults_per_block_k${k}`]: faults.includes(null) ? null : Math.round(mean(faults as number[])),
      [`stream_scavenges_per_block_k${k}`]: round3(mean(list.map((block) => block.scavenges))),
      [`stream_scavenge_ms_per_block_k${k}`]: round3(mean(list.map((block) => block.scavengeMs))),
    }
  }

  log('bench: retained heap')
  const k = 20000
  const h0 = await heapAfterGc()
  const kept = await streamTurn(k)
  const h1 = await heapAfterGc()
  await kept.handle.dispose()
  const h2 = await heapAfterGc()
  const keptFresh = await streamTurn(k, true)
  const h3 = await heapAfterGc()
  await keptFresh.handle.dispose()

  log('bench: session file')
  const dir = await mkdtemp(join(tmpdir(), 'bench-stream-'))
  try {
    await root.plugin(SessionFiles, { dir })
    const written = await streamTurn(k)
    await root.sessionFiles.flush()
    const bytes = (await readFile(root.sessionFiles.pathOf(written.handle.agent.id))).byteLength
    await written.handle.dispose()
    printSummary(
      {
        ...figures(2000),
        ...figures(20000),
        stream_retained_bytes_per_delta: Math.round((h1 - h0) / k),
        stream_retained_bytes_per_delta_fresh_text: Math.round((h3 - h2) / k),
        stream_file_bytes_per_delta: Math.round((bytes / k) * 10) / 10,
        stream_text_bytes_per_delta: Math.round((texts.get(k) ?? []).join('').length / k * 10) / 10,
        rounds,
      },
      started,
      quick,
    )
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
  process.exit(0)
}

function round3(value: number): number {
  return Math.round(value * 1000) / 1000
}

runBenchmark(main)
