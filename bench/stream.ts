/**
 * One agent, one turn, a scripted model streaming K text deltas then finishing (issue 15). Prints
 * one JSON line: the turns' wall time per delta at K = 2,000 and K = 20,000 (blocks of 20,000
 * deltas, as 10 turns or one, alternating in one process, each after a full GC; median of each),
 * the heap still held per delta once the turn is over (agent alive) — with the texts shared with the
 * benchmark, and with a fresh string per delta as an adapter's parser makes them — and the
 * `SessionFiles` bytes written per delta. Run: `npm run bench:stream`
 * (`--quick` scales the rounds down for smoke runs).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SessionFiles } from '../plugins/session-files/index.ts'
import { heapAfterGc } from './heap.ts'
import { printSummary, runBenchmark } from './report.ts'
import { scriptedHost } from './scripted-host.ts'

const quick = process.argv.includes('--quick')
const rounds = quick ? 3 : 9
const sizes: readonly number[] = [2000, 20000]
const log = (message: string) => process.stderr.write(`${message}\n`)


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
  // 20,000, each block after a full GC, so a block pays the collections its own garbage causes
  // and none left over from the other size
  const perBlock = 20000
  const perDelta = new Map<number, number[]>(sizes.map((k) => [k, []]))
  for (let round = 0; round < rounds; round++) {
    for (const k of round % 2 ? [...sizes].reverse() : sizes) {
      await heapAfterGc()
      let elapsed = 0
      for (let turn = 0; turn < perBlock / k; turn++) {
        const streamed = await streamTurn(k)
        elapsed += streamed.elapsed
        await streamed.handle.dispose()
      }
      perDelta.get(k)?.push(elapsed / perBlock)
    }
    log(`bench: round ${round + 1}/${rounds}`)
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
