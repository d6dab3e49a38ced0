/**
 * `SessionPostgres` (SPEC §14): sessions kept in PostgreSQL through `pg`, a table of headers and a
 * table of events, with the same public face as `SessionFiles` (`ctx.agents.resume`, `session/load`,
 * `session/children`) and a lease per tree, so one tree runs in one process at a time.
 */
import { type Context, Service } from 'cordis'
import Schema from 'schemastery'
import { localizeConfig } from '../../locales/index.ts'
import { thrownMessage } from '../../lib/errors.ts'
import { buildHeader } from '../../lib/session/session-header.ts'
import type { Agent, Session, SessionEvent } from '../../lib/types.ts'
import { listenDirect, type StoredSession } from '../host/index.ts'
import { loadPg } from './client-module.ts'
import { messages, SessionStoreError } from './errors.ts'
import { LeaseBook } from './leases.ts'
import type { ConnectionOptions, PgModule, PoolLike } from './pg-types.ts'
import { prepareSchema, schemaNamePattern, type Tables, tablesOf } from './schema.ts'
import { PostgresWriter } from './writer.ts'

export { SessionStoreError, TreeLeasedError } from './errors.ts'
export { checkConnection, readStoredSessions, type StoredSessionRow } from './stored-sessions.ts'
export { formatVersion } from './schema.ts'

declare module 'cordis' {
  interface Context {
    sessionPostgres: SessionPostgres
  }
}

const defaultSchema = 'subagent_inprocess'
const defaultRetryFor = 30_000

/**
 * Persists sessions to PostgreSQL and answers `session/load` and `session/children`. Events of a
 * session are written in `seq` order, batched per tick; `flush()` waits for them, and unloading the
 * plugin flushes too. Disposing an agent records the disposal (`disposed_at`) and keeps its rows.
 */
export class SessionPostgres extends Service {
  // cordis calls service methods through a tracing proxy, where #private fields cannot be read
  /** The schema's tables. */
  readonly tables: Tables
  private readonly ready: Promise<PoolLike>
  private readonly writer: PostgresWriter
  private readonly leases: LeaseBook
  /** Session id → root id of its tree, for every session leased or published here. */
  private readonly roots = new Map<string, string>()
  /**
   * Sessions read by `load`, with how many events were read: a resume of one of them re-counts
   * its stored events once its tree's lease is held, since a holder that died between the read
   * and the lease may have written more, and appending after a stale prefix would lose events.
   */
  private readonly loadedCounts = new Map<string, number>()
  private readonly logger: ReturnType<Context['logger']>
  private pool?: PoolLike
  /** The adoption of agents published before this instance; it logs its failures, never rejects. */
  private readonly adopting: Promise<void>
  private closed = false

  constructor(ctx: Context, config: SessionPostgres.Config) {
    super(ctx, 'sessionPostgres')
    this.tables = tablesOf(config.schema ?? defaultSchema)
    this.logger = ctx.logger('session-postgres')
    const retryFor = config.retryFor ?? defaultRetryFor
    const connection = connectionOptions(config)
    const pg = loadPg()
    this.ready = pg.then((module) => this.open(module, connection))
    // the writer and the leases wait for it and report a failure themselves; `Service.init` surfaces it
    this.ready.catch(() => {})
    this.writer = new PostgresWriter({
      tables: this.tables,
      db: () => this.ready,
      retryFor,
      warn: (message) => this.logger.warn(message),
      error: (message) => this.logger.error(message),
    })
    this.leases = new LeaseBook({
      connect: async () => {
        const { Client } = await pg
        await this.ready
        const client = new Client(connection)
        // an error before `connect` settles rejects it; one later is the lease book's to handle
        client.on('error', () => {})
        await client.connect()
        return client
      },
      namespace: this.tables.schema,
      retryFor,
      beforeRelease: () => this.writer.flushed(),
      onLost: (root, error) => this.loseTree(root, thrownMessage(error)),
      warn: (message) => this.logger.warn(message),
    })

    ctx.on('session/lease', (session) => this.lease(session))
    ctx.on('session/lease-abandoned', (session) => this.unlease(session.id))
    ctx.on('agent/created', (agent) => this.track(agent.session))
    listenDirect(ctx, 'session/event', (session) => this.writer.follow(session))
    ctx.on('agent/disposed', (agent) => this.untrack(agent))
    ctx.on('session/load', (id) => this.load(id))
    ctx.on('session/children', (id) => this.children(id))
    // agents published before this plugin loaded (a hot reload, a late load): lease and follow them
    const live = ctx.agents.list()
    this.adopting = live.length ? this.adopt(live) : Promise.resolve()
    ctx.effect(() => () => this.close(), 'session postgres')
  }

  /**
   * Fails the plugin's load when `pg` is missing, the server is unreachable or the schema is
   * unusable; else finishes once the agents published before it are adopted (leased and followed).
   */
  async [Service.init](): Promise<void> {
    await this.ready
    await this.adopting
  }

  /**
   * Resolves once every write queued before the call has reached the database or was dropped by a
   * logged failure, and the leases released meanwhile are given back. Never rejects.
   */
  async flush(): Promise<void> {
    await this.adopting
    await this.writer.flushed()
    await this.leases.settled()
  }

  /**
   * Reads a stored session (after the writes queued so far), `disposed: true` when its agent was
   * disposed. Rejects with `SessionStoreError` when it is missing or unreadable, or with the host's
   * header error for a malformed header.
   */
  async load(id: string): Promise<StoredSession> {
    if (typeof id !== 'string' || id.includes('\0')) throw new SessionStoreError(messages.badId(String(id)))
    const pool = await this.ready
    await this.writer.flushed()
    let header: unknown
    let disposed = false
    let rows: { seq: number; type: string; data: unknown }[]
    try {
      const found = await pool.query<{ header: unknown; disposed: boolean }>(
        `SELECT header, disposed_at IS NOT NULL AS disposed FROM ${this.tables.sessions} WHERE id = $1`,
        [id],
      )
      if (!found.rows.length) throw new SessionStoreError(messages.notFound(id))
      header = found.rows[0]!.header
      disposed = found.rows[0]!.disposed
      rows = (await pool.query<{ seq: number; type: string; data: unknown }>(`SELECT seq, type, data FROM ${this.tables.events} WHERE session_id = $1 ORDER BY seq`, [id]))
        .rows
    } catch (error) {
      if (error instanceof SessionStoreError) throw error
      throw new SessionStoreError(messages.unreadable(id, thrownMessage(error)), { cause: error })
    }
    const events: SessionEvent[] = rows.map((row, index) => {
      if (row.seq !== index) throw new SessionStoreError(messages.badEvent(id, index, `is missing (found seq ${row.seq})`))
      return { seq: row.seq, type: row.type, data: row.data }
    })
    const stored: StoredSession = { header: buildHeader(header as Record<string, unknown>), events }
    if (disposed) stored.disposed = true
    this.loadedCounts.set(id, events.length)
    return stored
  }

  /**
   * Ids of the stored sessions whose parent is `parentId` and that were not disposed, in creation
   * order; `undefined` when `parentId` is not stored here. Rejects with `SessionStoreError` on a
   * database failure.
   */
  async children(parentId: string): Promise<string[] | undefined> {
    if (typeof parentId !== 'string' || parentId.includes('\0')) return undefined
    const pool = await this.ready
    await this.writer.flushed()
    try {
      const { rows } = await pool.query<{ id: string | null; found: boolean }>(
        `SELECT c.id, true AS found FROM ${this.tables.sessions} p
         LEFT JOIN ${this.tables.sessions} c ON c.parent_id = p.id AND c.disposed_at IS NULL
         WHERE p.id = $1 ORDER BY c.ordinal`,
        [parentId],
      )
      if (!rows.length) return undefined
      return rows.flatMap((row) => (row.id === null ? [] : [row.id]))
    } catch (error) {
      throw new SessionStoreError(messages.unreadable(parentId, thrownMessage(error)), { cause: error })
    }
  }

  /** Ids of the sessions being written: published ones, and disposed ones with writes pending. */
  tracked(): string[] {
    return this.writer.tracked()
  }

  /** Root ids of the trees this process holds the lease of. */
  leased(): string[] {
    return this.leases.held()
  }

  private async open(pg: PgModule, connection: ConnectionOptions): Promise<PoolLike> {
    const pool = new pg.Pool(connection)
    // an idle client that loses its server emits here; the next query reconnects
    pool.on('error', () => {})
    this.pool = pool
    let client: Awaited<ReturnType<PoolLike['connect']>>
    try {
      client = await pool.connect()
    } catch (error) {
      await pool.end().catch(() => {})
      throw new SessionStoreError(messages.unreachable(thrownMessage(error)), { cause: error })
    }
    try {
      await prepareSchema(client, this.tables)
    } finally {
      client.release()
    }
    return pool
  }

  /**
   * `session/lease`: the root id of the session's tree, then its lease; for a session `load` read,
   * then the check that the store still holds exactly the events read (else a `SessionStoreError`
   * refuses the resume and the lease taken for it is given back).
   */
  private lease(session: Session): Promise<void> | void {
    const held = this.leaseTree(session)
    const loaded = this.loadedCounts.get(session.id)
    if (loaded === undefined) return held
    this.loadedCounts.delete(session.id)
    return held === undefined ? this.verifyUnchanged(session.id, loaded) : held.then(() => this.verifyUnchanged(session.id, loaded))
  }

  private async verifyUnchanged(id: string, loaded: number): Promise<void> {
    const pool = await this.ready
    let stored: number
    try {
      const { rows } = await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${this.tables.events} WHERE session_id = $1`, [id])
      stored = rows[0]?.n ?? 0
    } catch (error) {
      this.unlease(id)
      throw new SessionStoreError(messages.unreadable(id, thrownMessage(error)), { cause: error })
    }
    if (stored === loaded) return
    this.unlease(id)
    throw new SessionStoreError(messages.changedWhileResuming(id, loaded, stored))
  }

  private leaseTree(session: Session): Promise<void> | void {
    if (this.closed) return
    const { id, parentSession } = session.header
    const root = parentSession === undefined ? id : this.roots.get(parentSession)
    if (root !== undefined) {
      this.roots.set(id, root)
      return this.leases.hold(root)
    }
    return this.storedRoot(parentSession as string).then((stored) => {
      this.roots.set(id, stored)
      return this.leases.hold(stored)
    })
  }

  private unlease(id: string): void {
    const root = this.roots.get(id)
    if (root === undefined) return
    this.roots.delete(id)
    this.leases.drop(root)
  }

  /** The root id of a parent that is not live here: its stored root, or the parent itself. */
  private async storedRoot(parentId: string): Promise<string> {
    const pool = await this.ready
    await this.writer.flushed()
    const { rows } = await pool.query<{ root_id: string }>(`SELECT root_id FROM ${this.tables.sessions} WHERE id = $1`, [parentId])
    return rows[0]?.root_id ?? parentId
  }

  private track(session: Session): void {
    if (this.closed) return
    if (session.id.includes('\0')) {
      this.logger.warn(messages.badId(session.id))
      return
    }
    this.writer.start(session, this.roots.get(session.id) ?? null)
  }

  private untrack(agent: Agent): void {
    this.writer.dispose(agent.session)
    this.unlease(agent.id)
  }

  /** Adopts agents published before this instance: their trees' leases, then their sessions. */
  private async adopt(agents: Agent[]): Promise<void> {
    const byId = new Map(agents.map((agent) => [agent.id, agent]))
    const rootOf = async (agent: Agent): Promise<string> => {
      let header = agent.session.header
      while (header.parentSession !== undefined) {
        const parent = byId.get(header.parentSession)
        if (!parent) return this.storedRoot(header.parentSession)
        header = parent.session.header
      }
      return header.id
    }
    for (const agent of agents) {
      try {
        const root = await rootOf(agent)
        if (this.closed) return
        this.roots.set(agent.id, root)
        await this.leases.hold(root)
        if (this.closed || !this.ctx.agents.get(agent.id)) {
          this.unlease(agent.id)
          continue
        }
        this.track(agent.session)
      } catch (error) {
        this.roots.delete(agent.id)
        this.logger.error(messages.writeFailed(agent.id, thrownMessage(error)))
      }
    }
  }

  /**
   * A tree's lease could not be taken again after a lost connection (another process took it, or
   * the server stayed away): its sessions are no longer written, so two processes never interleave.
   */
  private loseTree(root: string, reason: string): void {
    this.logger.error(messages.leaseGone(root, reason))
    for (const [id, owner] of this.roots) if (owner === root) this.writer.stop(id, `the lease of tree ${root} is lost`)
  }

  private async close(): Promise<void> {
    this.closed = true
    await this.writer.flushed()
    await this.leases.close()
    this.roots.clear()
    await this.pool?.end().catch(() => {})
  }
}

/** The `pg` options from a config: a connection string, or the pool fields, never both mixed in. */
function connectionOptions(config: SessionPostgres.Config): ConnectionOptions {
  const { connectionString, host, port, user, password, database, max, ssl } = config
  const options: ConnectionOptions = { max: max ?? 10, connectionTimeoutMillis: 10_000 }
  if (connectionString !== undefined) options.connectionString = connectionString
  if (host !== undefined) options.host = host
  if (port !== undefined) options.port = port
  if (user !== undefined) options.user = user
  if (password !== undefined) options.password = password
  if (database !== undefined) options.database = database
  if (ssl !== undefined) options.ssl = ssl
  return options
}

export namespace SessionPostgres {
  export const inject = ['agents']

  /** The connection fields as `pg` takes them, passed through (`connectionOptions`). */
  export interface Config extends Pick<ConnectionOptions, 'connectionString' | 'host' | 'port' | 'user' | 'password' | 'database' | 'ssl'> {
    /** Connections of the pool; default 10 (the lease connection is one more). */
    max?: number
    /** The schema of the tables; default `subagent_inprocess`. */
    schema?: string
    /** How long writes and leases keep retrying a lost connection, in ms; default 30,000. */
    retryFor?: number
  }

  // field descriptions: `config.sessionPostgres` in locales/*.yml
  export const Config: Schema<Config> = localizeConfig(
    Schema.object({
      connectionString: Schema.string(),
      host: Schema.string(),
      port: Schema.natural().max(65535),
      user: Schema.string(),
      password: Schema.string().role('secret'),
      database: Schema.string(),
      ssl: Schema.boolean(),
      max: Schema.natural().min(1).default(10),
      schema: Schema.string().pattern(schemaNamePattern).default(defaultSchema),
      retryFor: Schema.natural().default(defaultRetryFor),
    }),
    'sessionPostgres',
  )
}

export default SessionPostgres
