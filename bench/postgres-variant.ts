/**
 * `npm run bench -- --variant=postgres`: the spawn cycle and the sustained append rate with
 * `SessionPostgres` on a local server, each beside the same work with `SessionFiles` in the same
 * process (blocks interleaved), so the ratios hold on a loaded machine. The server is a throwaway
 * cluster the parent starts (`BENCH_POSTGRES_URL` points at another one instead).
 * - `latency`: cycle p50 of each store (blocks alternate), and the written cycle: a block's wall
 *   time up to its store's `flush()`, per cycle — what a host that keeps up with its writes pays.
 * - `appends`: 100 agents append events concurrently, one per agent per tick, until 200,000 are
 *   written; events per second up to the store's `flush()`, for each store.
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from 'cordis'
import { Host } from '../plugins/host/index.ts'
import { ScriptedModel } from '../plugins/scripted-model/index.ts'
import { SessionFiles } from '../plugins/session-files/index.ts'
import { SessionPostgres } from '../plugins/session-postgres/index.ts'
import { postgresBinDir, startThrowawayCluster } from '../test/support/postgres.ts'
import { fullGc } from './heap.ts'
import { percentile } from './stats.ts'

export type StoreKind = 'postgres' | 'files'

interface CycleBench {
  root: Context
  cycle(): Promise<number>
}


let schemas = 0
/** Loads the store on `root`; resolves with its flush. */
export async function loadStore(root: Context, kind: StoreKind): Promise<() => Promise<void>> {
  if (kind === 'postgres') {
    const connectionString = process.env.BENCH_POSTGRES_URL
    if (!connectionString) throw new TypeError('BENCH_POSTGRES_URL is not set (the bench parent starts a cluster)')
    await root.plugin(SessionPostgres, { connectionString, schema: `bench_${process.pid}_${++schemas}` })
    const store = root.sessionPostgres
    return () => store.flush()
  }
  const dir = await mkdtemp(join(tmpdir(), 'bench-files-'))
  process.once('exit', () => void rm(dir, { recursive: true, force: true }))
  await root.plugin(SessionFiles, { dir })
  const store = root.sessionFiles
  return () => store.flush()
}

/** Starts the server for the phases (unless `BENCH_POSTGRES_URL` is set); returns its stop. */
export async function startBenchServer(): Promise<() => void> {
  if (process.env.BENCH_POSTGRES_URL) return () => {}
  const binDir = postgresBinDir()
  if (!binDir) throw new TypeError('PostgreSQL binaries (initdb, pg_ctl) not found: install postgresql, or set BENCH_POSTGRES_URL')
  const cluster = await startThrowawayCluster(binDir)
  process.env.BENCH_POSTGRES_URL = cluster.connectionString
  return () => cluster.close()
}

/** The latency phase: cycle p50s and written-cycle costs of both stores, blocks alternating. */
export async function storeLatency(
  setup: (kind: StoreKind) => Promise<CycleBench & { flush(): Promise<void> }>,
  scale: (n: number) => number,
): Promise<Record<string, number>> {
  const hosts = { postgres: await setup('postgres'), files: await setup('files') }
  for (let i = 0; i < scale(1000); i++) {
    await hosts.postgres.cycle()
    await hosts.files.cycle()
  }
  await Promise.all([hosts.postgres.flush(), hosts.files.flush()])
  await fullGc()
  const samples = { postgres: [] as number[], files: [] as number[] }
  const written = { postgres: 0, files: 0 }
  const blocks = 20
  const perBlock = Math.max(1, Math.floor(scale(10000) / blocks))
  for (let block = 0; block < blocks; block++) {
    const order: StoreKind[] = block % 2 === 0 ? ['postgres', 'files'] : ['files', 'postgres']
    for (const kind of order) {
      const wall = performance.now()
      for (let i = 0; i < perBlock; i++) samples[kind].push(await hosts[kind].cycle())
      await hosts[kind].flush()
      written[kind] += performance.now() - wall
    }
  }
  for (const list of Object.values(samples)) list.sort((a, b) => a - b)
  const count = blocks * perBlock
  const writtenPostgres = (written.postgres * 1000) / count
  const writtenFiles = (written.files * 1000) / count
  return {
    postgres_cycle_p50_us: percentile(samples.postgres, 50),
    postgres_cycle_p95_us: percentile(samples.postgres, 95),
    files_cycle_p50_us: percentile(samples.files, 50),
    files_cycle_p95_us: percentile(samples.files, 95),
    postgres_over_files_cycle_p50_ratio: percentile(samples.postgres, 50) / percentile(samples.files, 50),
    postgres_written_cycle_us: writtenPostgres,
    files_written_cycle_us: writtenFiles,
    postgres_over_files_written_cycle_ratio: writtenPostgres / writtenFiles,
  }
}

/** The appends phase: events per second from 100 concurrent agents, each store on its own host. */
export async function storeAppends(scale: (n: number) => number): Promise<Record<string, number>> {
  const agentsCount = 100
  const total = scale(200_000)
  const out: Record<string, number> = {}
  const rates: Record<StoreKind, number[]> = { postgres: [], files: [] }
  const hosts: Record<StoreKind, { root: Context; flush: () => Promise<void> }> = {} as never
  for (const kind of ['postgres', 'files'] as const) {
    const ctx = new Context()
    await ctx.plugin(Host, { maxSteps: 8 })
    await ctx.plugin(ScriptedModel, {} as ScriptedModel.Config)
    hosts[kind] = { root: ctx, flush: await loadStore(ctx, kind) }
  }
  // three rounds, stores alternating, so both see the same machine
  for (let round = 0; round < 3; round++) {
    for (const kind of round % 2 === 0 ? (['postgres', 'files'] as const) : (['files', 'postgres'] as const)) {
      const { root, flush } = hosts[kind]
      const handles = await Promise.all(Array.from({ length: agentsCount }, () => root.agents.create({ agentOptions: { provider: 'scripted', model: 'bench' } })))
      await flush()
      const perAgent = Math.ceil(total / agentsCount)
      const started = performance.now()
      await Promise.all(
        handles.map(async ({ agent }, index) => {
          for (let i = 0; i < perAgent; i++) {
            agent.session.append('bench/event', { agent: index, i, text: 'an event of a typical size, about a line of text' })
            await new Promise((resolve) => setImmediate(resolve))
          }
        }),
      )
      await flush()
      rates[kind].push((perAgent * agentsCount) / ((performance.now() - started) / 1000))
      await Promise.all(handles.map((handle) => handle.dispose()))
      await flush()
    }
  }
  for (const kind of ['postgres', 'files'] as const) {
    const sorted = [...rates[kind]].sort((a, b) => a - b)
    out[`${kind}_appends_per_sec_100_agents`] = sorted[1]!
  }
  out.postgres_over_files_append_rate_ratio = out.postgres_appends_per_sec_100_agents! / out.files_appends_per_sec_100_agents!
  return out
}
