/**
 * A test scene with `SessionPostgres` on the run's throwaway cluster (test/support/postgres.ts),
 * in a schema of its own, and a direct client to read what the plugin wrote.
 */
import { expect } from 'chai'
import type { Fiber } from 'cordis'
import pg from 'pg'
import { SessionPostgres } from '../../plugins/session-postgres/index.ts'
import { freshSchema, type PostgresCluster } from '../support/postgres.ts'
import { type Scene, type ScenePlugin, scene } from '../support/scene.ts'

export const scriptedOptions = { provider: 'scripted', model: 'test' }

export interface PostgresHost extends Scene {
  schema: string
  store: SessionPostgres
  fiber: Fiber
  /** After a flush: invariants hold, the host is back at its baseline and nothing is followed or leased. */
  expectClean(): Promise<void>
}

/** Runs `text` on a fresh connection to the cluster. */
export async function query<Row = Record<string, unknown>>(cluster: PostgresCluster, text: string, values: unknown[] = []): Promise<Row[]> {
  const client = new pg.Client(cluster.connectionString)
  await client.connect()
  try {
    return (await client.query(text, values)).rows as Row[]
  } finally {
    await client.end()
  }
}

/** The stored events of a session, in seq order. */
export async function storedEvents(cluster: PostgresCluster, schema: string, id: string): Promise<{ seq: number; type: string; data: unknown }[]> {
  return query(cluster, `SELECT seq, type, data FROM "${schema}".events WHERE session_id = $1 ORDER BY seq`, [id])
}

/** A scene with `SessionPostgres` on `schema` (a fresh one by default); `plugins` load after it. */
export async function createPostgresHost(
  cluster: PostgresCluster,
  config: Partial<SessionPostgres.Config> = {},
  plugins: readonly ScenePlugin[] = [],
): Promise<PostgresHost> {
  const schema = config.schema ?? freshSchema()
  const host = await scene({ plugins: [[SessionPostgres, { connectionString: cluster.connectionString, ...config, schema }], ...plugins] })
  const store = host.root.sessionPostgres
  return Object.assign(host, {
    schema,
    store,
    fiber: host.fibers[0]!,
    async expectClean() {
      await store.flush()
      host.invariants.check()
      expect(host.snapshot()).to.deep.equal(host.baseline)
      expect(store.tracked()).to.deep.equal([])
      expect(store.leased()).to.deep.equal([])
    },
  })
}

/**
 * Resolves once the server holds no advisory lock (every lease given back), polling every 20 ms;
 * rejects after `ms`. A killed client's locks go as soon as its backend reads the closed socket:
 * on a loaded machine that backend may need a moment to be scheduled.
 */
export async function leasesFreed(cluster: PostgresCluster, ms = 5_000): Promise<number> {
  const started = performance.now()
  for (;;) {
    const [row] = await query<{ held: string }>(cluster, `SELECT count(*) AS held FROM pg_locks WHERE locktype = 'advisory'`)
    if (row?.held === '0') return performance.now() - started
    if (performance.now() - started > ms) throw new Error(`advisory locks still held after ${ms} ms`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
