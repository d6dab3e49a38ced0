/**
 * The few parts of `pg` this plugin uses, declared here so its types never require `@types/pg`
 * of a host that does not load `SessionPostgres`. `client-module.ts` loads the real package.
 */

export interface QueryResult<Row> {
  rows: Row[]
  rowCount: number | null
}

/** A pool or a client. */
export interface Queryable {
  query<Row = Record<string, unknown>>(text: string, values?: readonly unknown[]): Promise<QueryResult<Row>>
}

export interface PoolLike extends Queryable {
  connect(): Promise<ClientLike & { release(error?: Error | boolean): void }>
  end(): Promise<void>
  on(event: 'error', listener: (error: Error) => void): unknown
}

export interface ClientLike extends Queryable {
  connect(): Promise<void>
  end(): Promise<void>
  on(event: 'error' | 'end', listener: (error?: Error) => void): unknown
}

/** The `pg` pool and client options this plugin passes through. */
export interface ConnectionOptions {
  /** `postgres://user:password@host:port/database`; else the fields below (and `pg`'s `PG*` environment variables). */
  connectionString?: string
  host?: string
  port?: number
  user?: string
  password?: string
  database?: string
  max?: number
  ssl?: boolean
  connectionTimeoutMillis?: number
}

export interface PgModule {
  Pool: new (options: ConnectionOptions) => PoolLike
  Client: new (options: ConnectionOptions) => ClientLike
}
