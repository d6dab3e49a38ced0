/**
 * The tables `SessionPostgres` keeps, made on first use and checked (never recreated) afterwards.
 * The format version lives in its own one-row table, so a later format can migrate what it finds.
 */
import { thrownMessage } from '../../lib/errors.ts'
import { messages, SessionStoreError } from './errors.ts'
import type { Queryable } from './pg-types.ts'

/** The format this code writes and reads. A later format gets a new number and a migration here. */
export const formatVersion = 1

/** A schema name is an SQL identifier written unquoted: lowercase letters, digits, `_`. */
export const schemaNamePattern = /^[a-z_][a-z0-9_]{0,62}$/

/** The tables' qualified names for one schema (already validated). */
export interface Tables {
  schema: string
  format: string
  sessions: string
  events: string
}

export function tablesOf(schema: string): Tables {
  if (!schemaNamePattern.test(schema)) throw new TypeError(`schema must match ${schemaNamePattern.source}, got ${JSON.stringify(schema)}`)
  return { schema, format: `"${schema}".format`, sessions: `"${schema}".sessions`, events: `"${schema}".events` }
}

/** What each table must have (name → type), checked on every start. */
const requiredColumns: Record<'sessions' | 'events', Record<string, string>> = {
  sessions: { id: 'text', ordinal: 'bigint', parent_id: 'text', root_id: 'text', header: 'json', disposed_at: 'timestamp with time zone' },
  events: { session_id: 'text', seq: 'integer', type: 'text', data: 'json' },
}

function createStatements(t: Tables): string[] {
  return [
    `CREATE SCHEMA IF NOT EXISTS "${t.schema}"`,
    // one row: the format version of everything in the schema
    `CREATE TABLE ${t.format} (only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row), version integer NOT NULL)`,
    // ordinal: creation order, for session/children
    `CREATE TABLE ${t.sessions} (
      id text PRIMARY KEY,
      ordinal bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
      parent_id text,
      root_id text NOT NULL,
      header json NOT NULL,
      disposed_at timestamptz
    )`,
    `CREATE INDEX ON ${t.sessions} (parent_id, ordinal)`,
    `CREATE INDEX ON ${t.sessions} (root_id)`,
    // json, not jsonb: the data reads back as it was written, key order included
    `CREATE TABLE ${t.events} (
      session_id text NOT NULL,
      seq integer NOT NULL,
      type text NOT NULL,
      data json NOT NULL,
      PRIMARY KEY (session_id, seq)
    )`,
    `INSERT INTO ${t.format} (version) VALUES (${formatVersion})`,
  ]
}

/**
 * Makes the schema's tables when the format table is missing, else checks the stored version and
 * the columns. Runs in one transaction under a transaction-level advisory lock on the schema name,
 * so two processes starting at once never both create. Rejects with `SessionStoreError` for a
 * newer format, a foreign table, or any database failure.
 */
export async function prepareSchema(client: Queryable, tables: Tables): Promise<void> {
  const { schema } = tables
  try {
    await client.query('begin')
    try {
      await client.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 1))`, [`subagent-inprocess schema ${schema}`])
      const found = await client.query<{ exists: string | null }>(`SELECT to_regclass($1) AS exists`, [`"${schema}".format`])
      if (found.rows[0]?.exists === null || found.rows[0]?.exists === undefined) {
        for (const statement of createStatements(tables)) await client.query(statement)
      } else {
        const version = await client.query<{ version: number }>(`SELECT version FROM ${tables.format}`)
        const stored = version.rows[0]?.version
        if (stored !== undefined && stored > formatVersion) throw new SessionStoreError(messages.newerFormat(schema, stored, formatVersion))
        // formats older than `formatVersion` would be migrated here; 1 is the first
        await checkColumns(client, tables)
      }
      await client.query('commit')
    } catch (error) {
      await client.query('rollback').catch(() => {})
      throw error
    }
  } catch (error) {
    if (error instanceof SessionStoreError) throw error
    throw new SessionStoreError(messages.schemaFailed(schema, thrownMessage(error)), { cause: error })
  }
}

async function checkColumns(client: Queryable, tables: Tables): Promise<void> {
  const { rows } = await client.query<{ table_name: string; column_name: string; data_type: string }>(
    `SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = $1`,
    [tables.schema],
  )
  for (const [table, columns] of Object.entries(requiredColumns)) {
    for (const [column, type] of Object.entries(columns)) {
      if (!rows.some((row) => row.table_name === table && row.column_name === column && row.data_type === type)) {
        throw new SessionStoreError(messages.missingTable(tables.schema, table))
      }
    }
  }
}
