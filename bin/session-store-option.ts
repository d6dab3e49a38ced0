/**
 * `--sessions <value>` of the CLI: which session store a command loads. A `postgres://` (or
 * `postgresql://`) URL selects `SessionPostgres` (an optional `?schema=<name>` picks the schema;
 * the rest of the URL goes to `pg` as it is); anything else is a folder for `SessionFiles`. `start`
 * loads that store before the config, `resume` after it; `inspect` reads the saved sessions from it.
 */
import type { Context } from 'cordis'
import { type AgentView, applyEvent, viewOfHeader } from '../lib/session/agent-view.ts'
import type { SessionEvent } from '../lib/types.ts'
import { type InspectorSource, readSavedSessions } from '../plugins/inspector/index.ts'

/** The store a `--sessions` value names. */
export type SessionStoreChoice =
  | { kind: 'postgres'; connectionString: string; schema?: string }
  | { kind: 'files'; dir: string }

/** True for a PostgreSQL connection URL. */
export function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//i.test(value)
}

/** Reads a `--sessions` value. Throws a `TypeError` for an empty one or a malformed URL. */
export function parseSessionStore(value: string): SessionStoreChoice {
  if (!value) throw new TypeError('--sessions needs a postgres:// URL or a folder')
  if (!isPostgresUrl(value)) return { kind: 'files', dir: value }
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new TypeError('--sessions: not a valid postgres:// URL')
  }
  const schema = url.searchParams.get('schema') ?? undefined
  url.searchParams.delete('schema')
  return { kind: 'postgres', connectionString: url.toString(), ...(schema === undefined ? {} : { schema }) }
}

/**
 * Checks before anything starts that a PostgreSQL store can be reached, so a wrong URL ends the
 * command with one line rather than a logged plugin failure. Rejects with the store's message.
 */
export async function checkSessionStore(choice: SessionStoreChoice): Promise<void> {
  if (choice.kind !== 'postgres') return
  const { checkConnection } = await import('../plugins/session-postgres/index.ts')
  await checkConnection(choice.connectionString)
}

/**
 * Loads the chosen store on `root`. It waits for the host's `agents` (the config loads the host),
 * adopts the agents published before it, and resolves once started; rejects when it fails to start.
 */
export async function loadSessionStore(root: Context, choice: SessionStoreChoice): Promise<void> {
  if (choice.kind === 'postgres') {
    const { SessionPostgres } = await import('../plugins/session-postgres/index.ts')
    const { kind: _, ...config } = choice
    await root.plugin(SessionPostgres, config)
  } else {
    const { SessionFiles } = await import('../plugins/session-files/index.ts')
    await root.plugin(SessionFiles, { dir: choice.dir })
  }
}

/** The saved sessions of the chosen store, for `inspect`. Rejects when the store cannot be read. */
export async function readSessionsSource(choice: SessionStoreChoice): Promise<InspectorSource> {
  if (choice.kind === 'files') return readSavedSessions(choice.dir)
  const { readStoredSessions } = await import('../plugins/session-postgres/index.ts')
  const { sessions, problems } = await readStoredSessions(choice)
  const views = new Map<string, AgentView>()
  const logs = new Map<string, readonly SessionEvent[]>()
  for (const { header, events } of sessions) {
    const view = viewOfHeader(header)
    for (const event of events) applyEvent(view, event, header.seedLength ?? 0)
    views.set(view.id, view)
    logs.set(view.id, events)
  }
  return { agents: () => [...views.values()], events: (id) => logs.get(id), problems: () => problems }
}

/** Where the sessions are, for the inspector's title: a URL without its password. */
export function describeSessionStore(choice: SessionStoreChoice): string {
  if (choice.kind === 'files') return choice.dir
  const url = new URL(choice.connectionString)
  if (url.password) url.password = '***'
  return url.toString() + (choice.schema ? ` (schema ${choice.schema})` : '')
}

/**
 * Resolves once what the loaded stores were given has been written. The CLI ends a `resume`
 * without disposing the tree (so it stays resumable): this is what it waits for instead.
 */
export async function flushSessionStores(root: Context): Promise<void> {
  const files = root.get('sessionFiles') as { flush(): Promise<void> } | undefined
  const postgres = root.get('sessionPostgres') as { flush(): Promise<void> } | undefined
  await Promise.all([files?.flush(), postgres?.flush()])
}

/** A `--sessions` value as messages show it: a URL's password as `***`. */
export function safeWhere(value: string): string {
  try {
    return describeSessionStore(parseSessionStore(value))
  } catch {
    return value
  }
}
