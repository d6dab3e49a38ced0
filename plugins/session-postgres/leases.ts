/**
 * Leases of trees (SPEC §14 "One tree, one process"): a session-level PostgreSQL advisory lock per
 * tree, keyed by its root id, all on one connection this process holds open. A process that dies
 * loses the connection and with it every lock, so another can take the tree at once.
 *
 * A lease is held while it has holders: the sessions of the tree published here, and creations
 * still in their transaction. The last holder's going releases it, after the tree's queued writes.
 */
import { thrownMessage } from '../../lib/errors.ts'
import { messages, TreeLeasedError } from './errors.ts'
import type { ClientLike } from './pg-types.ts'
import { isConnectionFailure } from './writer.ts'

interface Lease {
  holders: number
  /** The lock is taken on the current connection. */
  held: boolean
  /** The acquisition in flight, shared by every holder that waits for it. */
  acquiring?: Promise<void>
  /** The release in flight. */
  releasing?: Promise<void>
}

export interface LeaseOptions {
  /** A new, connected client for the locks. */
  connect(): Promise<ClientLike>
  /** Distinguishes the trees of one schema from those of another in the same database. */
  namespace: string
  /** How long to keep trying to reach the server before a lease is refused, in ms. */
  retryFor: number
  /** Resolves once the tree's queued writes are done: a lease outlives its tree's last write. */
  beforeRelease(rootId: string): Promise<void>
  /** The lease of `rootId` could not be taken again after a lost connection (`error`: why). */
  onLost(rootId: string, error: unknown): void
  warn(message: string): void
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref?.())

/** Every lease this process holds, on one connection. */
export class LeaseBook {
  private readonly leases = new Map<string, Lease>()
  private readonly options: LeaseOptions
  private client?: Promise<ClientLike>
  /** Queries on the lock connection run one at a time (`pg` deprecates overlapping ones). */
  private queue: Promise<unknown> = Promise.resolve()
  private closed = false

  constructor(options: LeaseOptions) {
    this.options = options
  }

  /** Root ids of the trees leased to this process now. */
  held(): string[] {
    return [...this.leases].filter(([, lease]) => lease.held).map(([root]) => root)
  }

  /**
   * Adds a holder to the tree's lease. Returns nothing when the lease is already held here; else a
   * promise that resolves once it is taken, or rejects with `TreeLeasedError` when another process
   * holds it (the holder is not counted then), or with the connection's error.
   */
  hold(rootId: string): Promise<void> | void {
    let lease = this.leases.get(rootId)
    if (!lease) {
      lease = { holders: 0, held: false }
      this.leases.set(rootId, lease)
    }
    lease.holders++
    if (lease.held && !lease.releasing) return
    const current = lease
    current.acquiring ??= this.acquire(rootId, current).finally(() => {
      current.acquiring = undefined
    })
    return current.acquiring.catch((error: unknown) => {
      this.drop(rootId)
      throw error
    })
  }

  /** Removes a holder; the last one releases the lease once the tree's writes are done. */
  drop(rootId: string): void {
    const lease = this.leases.get(rootId)
    if (!lease) return
    lease.holders--
    if (lease.holders > 0) return
    if (!lease.held) {
      if (!lease.acquiring) this.leases.delete(rootId)
      return
    }
    lease.releasing ??= this.release(rootId, lease).finally(() => {
      lease.releasing = undefined
    })
  }

  /** Resolves once the releases in flight are done. Never rejects. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.leases.values()].map((lease) => lease.releasing))
  }

  /** Closes the connection: the server releases every lock with it. */
  async close(): Promise<void> {
    this.closed = true
    await Promise.allSettled([...this.leases.values()].map((lease) => lease.releasing))
    const client = this.client
    this.client = undefined
    for (const lease of this.leases.values()) lease.held = false
    this.leases.clear()
    if (client) await (await client.catch(() => undefined))?.end().catch(() => {})
  }

  private async acquire(rootId: string, lease: Lease): Promise<void> {
    if (lease.releasing) await lease.releasing
    // a release that found a new holder before unlocking kept the lock
    if (lease.held) return
    const deadline = Date.now() + this.options.retryFor
    let delay = 50
    for (;;) {
      try {
        const client = await this.connection()
        const { rows } = await this.serial(() =>
          client.query<{ taken: boolean }>('SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS taken', [this.keyOf(rootId)]),
        )
        if (!rows[0]?.taken) throw new TreeLeasedError(rootId)
        lease.held = true
        return
      } catch (error) {
        if (!isConnectionFailure(error) || this.closed || Date.now() + delay > deadline) throw error
        await sleep(delay)
        delay = Math.min(delay * 2, 1000)
      }
    }
  }

  private async release(rootId: string, lease: Lease): Promise<void> {
    await this.options.beforeRelease(rootId).catch(() => {})
    if (lease.holders > 0 || !lease.held) return
    lease.held = false
    const client = this.client
    if (client) {
      try {
        const connected = await client
        await this.serial(() => connected.query('SELECT pg_advisory_unlock(hashtextextended($1, 0))', [this.keyOf(rootId)]))
      } catch {
        // a lost connection released the lock already
      }
    }
    if (lease.holders === 0 && !lease.acquiring) this.leases.delete(rootId)
  }

  /** Runs `query` after the queries queued before it. */
  private serial<T>(query: () => Promise<T>): Promise<T> {
    const result = this.queue.then(query)
    this.queue = result.catch(() => {})
    return result
  }

  private keyOf(rootId: string): string {
    return `${this.options.namespace}/${rootId}`
  }

  /** The lock connection, connected on first use; a lost one is replaced and its leases taken again. */
  private connection(): Promise<ClientLike> {
    if (this.client) return this.client
    const client = this.options.connect().then((connected) => {
      const lost = (error?: Error) => {
        if (this.client !== client) return
        this.client = undefined
        connected.end().catch(() => {})
        this.retake(thrownMessage(error ?? 'connection ended'))
      }
      connected.on('error', lost)
      connected.on('end', lost)
      return connected
    })
    client.catch(() => {
      if (this.client === client) this.client = undefined
    })
    this.client = client
    return client
  }

  /** After a lost connection: every lease with holders is taken again on a new one. */
  private retake(reason: string): void {
    if (this.closed) return
    const roots = [...this.leases].filter(([, lease]) => lease.held).map(([root]) => root)
    for (const lease of this.leases.values()) lease.held = false
    if (!roots.length) return
    this.options.warn(messages.leaseLost(roots, reason))
    for (const root of roots) {
      const lease = this.leases.get(root)!
      lease.acquiring ??= this.acquire(root, lease).finally(() => {
        lease.acquiring = undefined
      })
      lease.acquiring.catch((error: unknown) => {
        if (this.closed) return
        this.options.onLost(root, error)
      })
    }
  }
}
