/**
 * The write path of `SessionPostgres`: headers, events and disposals of every followed session,
 * gathered while the event loop turns and written in one batch per tick (one statement per table),
 * batches one after another. So the events of a session reach the table in `seq` order, and a
 * batch that fails on a lost connection is written again, whole, until it succeeds: every statement
 * is idempotent (`ON CONFLICT DO NOTHING` on the keys), so a batch the server committed just before
 * the connection dropped is not written twice, and nothing is skipped.
 */
import { isDeepStrictEqual } from 'node:util'
import { thrownMessage } from '../../lib/errors.ts'
import type { Session } from '../../lib/types.ts'
import { messages } from './errors.ts'
import type { Queryable } from './pg-types.ts'
import type { Tables } from './schema.ts'

/** A session the writer follows. */
interface Followed {
  session: Session
  /** Events handed to a batch so far (`session.events` index). */
  queued: number
  /** `refused`: its id is taken by another session; `failed`: a write failed for good. Both stop it. */
  state: 'open' | 'refused' | 'failed'
  /** Forgotten once its disposal row is written. */
  disposed: boolean
}

/** What one batch writes. */
class Batch {
  readonly headers: { followed: Followed; root: string | null }[] = []
  readonly eventOwners: Followed[] = []
  readonly ids: string[] = []
  readonly seqs: number[] = []
  readonly types: string[] = []
  readonly data: string[] = []
  readonly disposals: Followed[] = []

  get isEmpty(): boolean {
    return !this.headers.length && !this.ids.length && !this.disposals.length
  }
}

export interface WriterOptions {
  tables: Tables
  /** The pool, once the schema is ready. */
  db: () => Promise<Queryable>
  /** How long a batch is retried after connection failures before its sessions stop, in ms. */
  retryFor: number
  warn(message: string): void
  error(message: string): void
}

/** Connection-level failures worth retrying: the server went away or is restarting. */
export function isConnectionFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code
  if (typeof code === 'string') {
    // class 08: connection exception; 57P0x: admin/crash shutdown, cannot connect now
    if (code.startsWith('08') || /^57P0[1-3]$/.test(code)) return true
    if (['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN'].includes(code)) return true
  }
  const message = thrownMessage(error)
  return /Connection terminated|connection timeout|Client has encountered a connection error|Client was closed/i.test(message)
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref?.())

/** Followed sessions and their queued writes; one batch in flight at a time. */
export class PostgresWriter {
  private readonly followed = new Map<string, Followed>()
  private readonly options: WriterOptions
  private pending = new Batch()
  /** Batches are numbered in order: `flushed()` waits for the number current at its call. */
  private pendingNumber = 1
  private doneNumber = 0
  private scheduled = false
  private running = false
  private readonly waiters: { number: number; resolve: () => void }[] = []

  constructor(options: WriterOptions) {
    this.options = options
  }

  /** Ids of the sessions followed now (published here, or disposed with writes pending). */
  tracked(): string[] {
    return [...this.followed.keys()]
  }

  /**
   * Starts following a published session: its header (with the tree's root id, or `null` to let
   * the database derive it from the parent's row) and every event it has so far.
   */
  start(session: Session, root: string | null): void {
    if (this.followed.get(session.id)?.session === session) return
    const followed: Followed = { session, queued: 0, state: 'open', disposed: false }
    this.followed.set(session.id, followed)
    this.pending.headers.push({ followed, root })
    this.follow(session)
  }

  /** Queues the events `session` gained since the last call. */
  follow(session: Session): void {
    const followed = this.followed.get(session.id)
    if (!followed || followed.session !== session || followed.state !== 'open') return
    const { events } = session
    const batch = this.pending
    for (let seq = followed.queued; seq < events.length; seq++) {
      const event = events[seq]!
      batch.eventOwners.push(followed)
      batch.ids.push(session.id)
      batch.seqs.push(event.seq)
      batch.types.push(event.type)
      batch.data.push(JSON.stringify(event.data))
    }
    followed.queued = events.length
    this.schedule()
  }

  /** Records the disposal (after the session's last events) and forgets the session once written. */
  dispose(session: Session): void {
    const followed = this.followed.get(session.id)
    if (!followed || followed.session !== session) return
    this.follow(session)
    followed.disposed = true
    this.pending.disposals.push(followed)
    this.schedule()
  }

  /** Stops following `id` without writing anything more (its tree's lease was lost). */
  stop(id: string, reason: string): void {
    const followed = this.followed.get(id)
    if (followed?.state !== 'open') return
    followed.state = 'failed'
    this.options.error(messages.writeFailed(id, reason))
    this.followed.delete(id)
  }

  /** Resolves once every write queued before the call is done, or dropped by a logged failure. Never rejects. */
  flushed(): Promise<void> {
    const target = this.pending.isEmpty ? this.pendingNumber - 1 : this.pendingNumber
    if (this.doneNumber >= target) return Promise.resolve()
    return new Promise((resolve) => this.waiters.push({ number: target, resolve }))
  }

  private schedule(): void {
    if (this.scheduled || this.running) return
    this.scheduled = true
    // one batch per tick: every append of this turn of the event loop goes in it
    setImmediate(() => {
      this.scheduled = false
      void this.drain()
    })
  }

  private async drain(): Promise<void> {
    if (this.running) return
    this.running = true
    try {
      while (!this.pending.isEmpty) {
        const batch = this.pending
        const number = this.pendingNumber++
        this.pending = new Batch()
        await this.write(batch)
        this.doneNumber = number
        this.wake()
      }
      // nothing was pending: whatever number was reserved is done too
      this.doneNumber = this.pendingNumber - 1
      this.wake()
    } finally {
      this.running = false
    }
  }

  private wake(): void {
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const waiter = this.waiters[i]!
      if (waiter.number <= this.doneNumber) {
        this.waiters.splice(i, 1)
        waiter.resolve()
      }
    }
  }

  /** Writes one batch, retrying it whole after connection failures for up to `retryFor` ms. */
  private async write(batch: Batch): Promise<void> {
    const deadline = Date.now() + this.options.retryFor
    let delay = 50
    let warned = false
    for (;;) {
      try {
        await this.writeOnce(batch)
        break
      } catch (error) {
        if (!isConnectionFailure(error) || Date.now() + delay > deadline) {
          this.fail(batch, thrownMessage(error))
          break
        }
        if (!warned) this.options.warn(messages.retrying(thrownMessage(error), delay))
        warned = true
        await sleep(delay)
        delay = Math.min(delay * 2, 1000)
      }
    }
    for (const followed of batch.disposals) {
      if (this.followed.get(followed.session.id) === followed) this.followed.delete(followed.session.id)
    }
  }

  private fail(batch: Batch, reason: string): void {
    const sessions = new Set<Followed>([...batch.headers.map((entry) => entry.followed), ...batch.eventOwners, ...batch.disposals])
    for (const followed of sessions) {
      if (followed.state !== 'open') continue
      followed.state = 'failed'
      this.options.error(messages.writeFailed(followed.session.id, reason))
      if (this.followed.get(followed.session.id) === followed) this.followed.delete(followed.session.id)
    }
  }

  private async writeOnce(batch: Batch): Promise<void> {
    const db = await this.options.db()
    const { sessions, events } = this.options.tables
    const headers = batch.headers.filter((entry) => entry.followed.state === 'open')
    if (headers.length) {
      const ids = headers.map(({ followed }) => followed.session.id)
      const inserted = await db.query<{ id: string }>(
        `INSERT INTO ${sessions} (id, parent_id, root_id, header)
         SELECT n.id, n.parent_id, COALESCE(n.root_id, (SELECT p.root_id FROM ${sessions} p WHERE p.id = n.parent_id), n.parent_id, n.id), n.header::json
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS n(id, parent_id, root_id, header, position)
         ORDER BY n.position
         ON CONFLICT (id) DO NOTHING RETURNING id`,
        [
          ids,
          headers.map(({ followed }) => followed.session.header.parentSession ?? null),
          headers.map(({ root }) => root),
          headers.map(({ followed }) => JSON.stringify(followed.session.header)),
        ],
      )
      if (inserted.rows.length < headers.length) await this.checkTaken(db, headers, new Set(inserted.rows.map((row) => row.id)))
    }
    if (batch.ids.length) {
      let { ids, seqs, types, data } = batch
      if (batch.eventOwners.some((followed) => followed.state !== 'open')) {
        const keep = batch.eventOwners.map((followed) => followed.state === 'open')
        ids = ids.filter((_, i) => keep[i])
        seqs = seqs.filter((_, i) => keep[i])
        types = types.filter((_, i) => keep[i])
        data = data.filter((_, i) => keep[i])
      }
      if (ids.length) {
        await db.query(
          `INSERT INTO ${events} (session_id, seq, type, data)
           SELECT session_id, seq, type, data::json FROM unnest($1::text[], $2::int[], $3::text[], $4::text[]) AS n(session_id, seq, type, data)
           ON CONFLICT (session_id, seq) DO NOTHING`,
          [ids, seqs, types, data],
        )
      }
    }
    const disposed = batch.disposals.filter((followed) => followed.state === 'open').map((followed) => followed.session.id)
    if (disposed.length) {
      await db.query(`UPDATE ${sessions} SET disposed_at = now() WHERE id = ANY($1::text[]) AND disposed_at IS NULL`, [disposed])
    }
  }

  /**
   * Headers the insert skipped: a row with the same header is the session's own (a resume, or this
   * batch written before a lost connection), live again; any other is another session, so this one
   * is refused.
   */
  private async checkTaken(db: Queryable, headers: { followed: Followed }[], inserted: Set<string>): Promise<void> {
    const skipped = headers.filter(({ followed }) => !inserted.has(followed.session.id))
    const { rows } = await db.query<{ id: string; header: unknown }>(`SELECT id, header FROM ${this.options.tables.sessions} WHERE id = ANY($1::text[])`, [
      skipped.map(({ followed }) => followed.session.id),
    ])
    const stored = new Map(rows.map((row) => [row.id, row.header]))
    const own: string[] = []
    for (const { followed } of skipped) {
      if (isDeepStrictEqual(stored.get(followed.session.id), JSON.parse(JSON.stringify(followed.session.header)))) {
        own.push(followed.session.id)
        continue
      }
      followed.state = 'refused'
      this.options.warn(messages.alreadyExists(followed.session.id))
      if (this.followed.get(followed.session.id) === followed) this.followed.delete(followed.session.id)
    }
    // a disposed session published again (an explicit resume) is live again
    if (own.length) await db.query(`UPDATE ${this.options.tables.sessions} SET disposed_at = NULL WHERE id = ANY($1::text[])`, [own])
  }
}
