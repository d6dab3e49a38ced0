/**
 * One agent, one turn, a scripted model streaming K text deltas then finishing (issue 15). Prints
 * one JSON line: the turns' wall time per delta at K = 2,000 and K = 20,000 (blocks of 20,000
 * deltas, as 10 turns or one, alternating in one process, each after a young-generation
 * collection; median of each),
 * the heap still held per delta once the turn is over (agent alive) — with the texts shared with the
 * benchmark, and with a fresh string per delta as an adapter's parser makes them — and the
 * `SessionFiles` bytes written per delta. Per size, also what a block costs besides the turns'
 * own work (medians over the rounds): the main thread's minor page faults (on the benchmark VM
 * each fresh page's first touch costs ≈ 18 µs: V8's large-object space maps fresh pages for every
 * object past 128 KB), and the scavenges inside the block with their summed duration (a scavenge
 * in the middle of a long turn copies what that turn holds so far). Those are read around the
 * timed block, not subtracted from it: the per-delta figures still include every such cost.
 *
 * Why a young-generation collection before each block, not a full one (session 8): a block then
 * pays the scavenges its own garbage causes and none left over from the other size, as before,
 * while the old generation is collected when V8 decides, inside whichever blocks it falls in (the
 * median takes it as it comes). A full collection between blocks, with no turn alive, also freed
 * the hidden classes of every object a turn makes (transitions hold them weakly), so all the
 * optimized code of the streaming path was thrown away before every block and compiled again
 * during its first ≈ 6,000 deltas (≈ 12 ms a block, 0.6 µs a delta, on this VM): a cost of the
 * forced collection, not of streaming, and one a host pays only after a full collection while no
 * turn runs. Figures before this change are not comparable with later ones. With a block that
 * cheap (≈ 5–7 ms), 25 rounds instead of 9: the medians scatter less, for ≈ 2 s more.
 * Run: `npm run bench:stream` (`--quick` scales the rounds down for smoke runs).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks'
import { SessionFiles } from '../plugins/session-files/index.ts'
import { fullGc, heapAfterGc } from './heap.ts'
import { mainThreadFaults } from './main-thread.ts'
import { printSummary, runBenchmark } from './report.ts'
import { scriptedHost } from './scripted-host.ts'

const quick = process.argv.includes('--quick')
const rounds = quick ? 3 : 25
const sizes: readonly number[] = [2000, 20000]
const log = (message: string) => process.stderr.write(`${message}\n`)

/** One young-generation collection (a scavenge), and one event-loop turn. Needs `--expose-gc`. */
async function youngGc(): Promise<void> {
  const gc = (globalThis as { gc?: (options: { type: 'minor'; execution: 'sync' }) => void }).gc
  if (!gc) throw new Error('run with --expose-gc')
  gc({ type: 'minor', execution: 'sync' })
  await new Promise(setImmediate)
}


function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.ceil(sorted.length / 2) - 1]
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
  // 20,000, each block after a scavenge, so a block pays the scavenges its own garbage causes
  // and none left over from the other size (see the header for why not a full collection)
  const perBlock = 20000
  const perDelta = new Map<number, number[]>(sizes.map((k) => [k, []]))
  const faults = new Map<number, number[]>(sizes.map((k) => [k, []]))
  // each block's window, to count the scavenges that started inside it once they are reported
  const windows: { k: number; from: number; to: number }[] = []
  const scavenges: PerformanceEntry[] = []
  const observer = new PerformanceObserver((list) => {
    // perf_hooks.constants.NODE_PERFORMANCE_GC_MINOR = 1
    for (const entry of list.getEntries()) if ((entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind === 1) scavenges.push(entry)
  })
  observer.observe({ entryTypes: ['gc'] })
  await fullGc()
  for (let round = 0; round < rounds; round++) {
    for (const k of round % 2 ? [...sizes].reverse() : sizes) {
      await youngGc()
      let elapsed = 0
      const faultsBefore = mainThreadFaults()
      const from = performance.now()
      for (let turn = 0; turn < perBlock / k; turn++) {
        const streamed = await streamTurn(k)
        elapsed += streamed.elapsed
        await streamed.handle.dispose()
      }
      windows.push({ k, from, to: performance.now() })
      const faultsAfter = mainThreadFaults()
      if (faultsBefore !== null && faultsAfter !== null) faults.get(k)?.push(faultsAfter - faultsBefore)
      perDelta.get(k)?.push(elapsed / perBlock)
    }
    log(`bench: round ${round + 1}/${rounds}`)
  }
  await heapAfterGc()
  observer.disconnect()
  const scavengeCounts = new Map<number, number[]>(sizes.map((k) => [k, []]))
  const scavengeMs = new Map<number, number[]>(sizes.map((k) => [k, []]))
  for (const { k, from, to } of windows) {
    const inside = scavenges.filter((entry) => entry.startTime >= from && entry.startTime < to)
    scavengeCounts.get(k)?.push(inside.length)
    scavengeMs.get(k)?.push(inside.reduce((sum, entry) => sum + entry.duration, 0))
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
        stream_delta_us_k2000: round3(median(perDelta.get(2000) ?? [])),
        stream_delta_us_k20000: round3(median(perDelta.get(20000) ?? [])),
        stream_faults_per_block_k2000: faults.get(2000)?.length ? median(faults.get(2000) ?? []) : null,
        stream_faults_per_block_k20000: faults.get(20000)?.length ? median(faults.get(20000) ?? []) : null,
        stream_scavenges_per_block_k2000: median(scavengeCounts.get(2000) ?? []),
        stream_scavenges_per_block_k20000: median(scavengeCounts.get(20000) ?? []),
        stream_scavenge_ms_per_block_k2000: round3(median(scavengeMs.get(2000) ?? [])),
        stream_scavenge_ms_per_block_k20000: round3(median(scavengeMs.get(20000) ?? [])),
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
