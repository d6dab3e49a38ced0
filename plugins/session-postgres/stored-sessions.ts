/**
 * Every session of a schema read at once, for tools outside a running host (the CLI's `inspect`):
 * one connection, two queries, closed again. A session that does not read back is reported and
 * skipped; the others are still returned.
 */
import { thrownMessage } from '../../lib/errors.ts'
import { buildHeader } from '../../lib/session/session-header.ts'
import type { SessionEvent, SessionHeader } from '../../lib/types.ts'
import { loadPg } from './client-module.ts'
import { messages, SessionStoreError } from './errors.ts'
import { tablesOf } from './schema.ts'

/** One stored session, in creation order. */
export interface StoredSessionRow {
  header: SessionHeader
  events: SessionEvent[]
  disposed: boolean
}

/**
 * Reads every session of `schema` (default `subagent_inprocess`). Rejects with `SessionStoreError`
 * when the server cannot be reached or the schema holds no sessions table; a session whose header
 * or events do not read back is left out and named in `problems`.
 */
export async function readStoredSessions(options: { connectionString: string; schema?: string }): Promise<{
  sessions: StoredSessionRow[]
  problems: string[]
}> {
  const tables = tablesOf(options.schema ?? 'subagent_inprocess')
  const { Client } = await loadPg()
  const client = new Client({ connectionString: options.connectionString, connectionTimeoutMillis: 10_000 })
  client.on('error', () => {})
  try {
    await client.connect()
  } catch (error) {
    throw new SessionStoreError(messages.unreachable(thrownMessage(error)), { cause: error })
  }
  try {
    const headers = await client.query<{ id: string; header: unknown; disposed: boolean }>(
      `SELECT id, header, disposed_at IS NOT NULL AS disposed FROM ${tables.sessions} ORDER BY ordinal`,
    )
    const events = await client.query<{ session_id: string; seq: number; type: string; data: unknown }>(
      `SELECT session_id, seq, type, data FROM ${tables.events} ORDER BY session_id, seq`,
    )
    const bySession = new Map<string, SessionEvent[]>()
    for (const row of events.rows) {
      let list = bySession.get(row.session_id)
      if (!list) bySession.set(row.session_id, (list = []))
      list.push({ seq: row.seq, type: row.type, data: row.data })
    }
    const sessions: StoredSessionRow[] = []
    const problems: string[] = []
    for (const row of headers.rows) {
      try {
        const list = bySession.get(row.id) ?? []
        const gap = list.findIndex((event, index) => event.seq !== index)
        if (gap >= 0) throw new SessionStoreError(messages.badEvent(row.id, gap, `is missing (found seq ${list[gap]!.seq})`))
        sessions.push({ header: buildHeader(row.header as Record<string, unknown>), events: list, disposed: row.disposed })
      } catch (error) {
        problems.push(`session "${row.id}": skipped, ${thrownMessage(error)}`)
      }
    }
    return { sessions, problems }
  } catch (error) {
    if (error instanceof SessionStoreError) throw error
    throw new SessionStoreError(`schema "${tables.schema}" could not be read: ${thrownMessage(error)}`, { cause: error })
  } finally {
    await client.end().catch(() => {})
  }
}

/** Connects once and closes again. Rejects with `PostgreSQL could not be reached: <reason>`. */
export async function checkConnection(connectionString: string): Promise<void> {
  const { Client } = await loadPg()
  const client = new Client({ connectionString, connectionTimeoutMillis: 10_000 })
  client.on('error', () => {})
  try {
    await client.connect()
  } catch (error) {
    throw new SessionStoreError(messages.unreachable(thrownMessage(error)), { cause: error })
  } finally {
    await client.end().catch(() => {})
  }
}
