/**
 * Errors and log messages of `SessionPostgres`. Every pinned string is defined here once; header
 * field errors are the host's (`session header <field> must be a non-negative safe integer`).
 */
import { SubagentError } from '../../lib/errors.ts'

/** A stored session or schema that cannot be read or used. Code `SESSION_STORE`. */
export class SessionStoreError extends SubagentError {
  override readonly name = 'SessionStoreError'
  constructor(message: string, options?: ErrorOptions) {
    super('SESSION_STORE', message, options)
  }
}

/** Another process holds the lease of the tree (SPEC §14). Code `TREE_LEASED`. */
export class TreeLeasedError extends SubagentError {
  override readonly name = 'TreeLeasedError'
  constructor(readonly rootId: string) {
    super('TREE_LEASED', `tree ${rootId} is held by another process`)
  }
}

export const messages = {
  notFound: (id: string) => `session "${id}" not found in PostgreSQL`,
  unreadable: (id: string, reason: string) => `session "${id}" could not be read from PostgreSQL: ${reason}`,
  badEvent: (id: string, seq: number, reason: string) => `stored session "${id}" event ${seq} ${reason}`,
  badId: (id: string) => `session id "${id}" cannot be stored in PostgreSQL (it holds a NUL character)`,
  newerFormat: (schema: string, version: number, known: number) =>
    `schema "${schema}" holds session format version ${version}, newer than this SessionPostgres reads (${known}): upgrade the package`,
  missingTable: (schema: string, table: string) =>
    `schema "${schema}" has a format table but no usable "${table}" table: it was not made by SessionPostgres`,
  changedWhileResuming: (id: string, loaded: number, stored: number) =>
    `session "${id}" changed in PostgreSQL while it was being resumed (${loaded} events read, ${stored} stored once its tree's lease was taken): resume it again`,
  unreachable: (reason: string) => `PostgreSQL could not be reached: ${reason}`,
  schemaFailed: (schema: string, reason: string) => `schema "${schema}" could not be prepared: ${reason}`,
  // warnings and errors the plugin logs and carries on
  alreadyExists: (id: string) => `session "${id}" already exists in PostgreSQL; the new session is not persisted`,
  writeFailed: (id: string, reason: string) =>
    `session "${id}" could not be written to PostgreSQL: ${reason}; later events are not persisted`,
  retrying: (reason: string, ms: number) => `PostgreSQL write failed (${reason}); retrying in ${ms} ms, in order`,
  leaseLost: (roots: readonly string[], reason: string) =>
    `PostgreSQL lease connection lost (${reason}); re-taking the leases of ${roots.length} tree(s)`,
  leaseGone: (rootId: string, reason: string) => `tree ${rootId} lost its lease (${reason}); its events are no longer persisted`,
} as const
