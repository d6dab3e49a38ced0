/**
 * Errors and log messages of `SessionFiles`. Every pinned string is defined here once; header
 * field errors are the host's (`session header <field> must be a non-negative safe integer`).
 */
import { SubagentError } from '../../lib/errors.ts'

/** A session file that cannot be named, read or parsed. `sessionId` is the id asked for. */
export class SessionFileError extends SubagentError {
  override readonly name = 'SessionFileError'
  constructor(readonly sessionId: string, message: string, options?: ErrorOptions) {
    super('SESSION_FILE', message, options)
  }
}

export const messages = {
  unsafeId: (id: string) => `session id "${id}" is not a safe file name`,
  notFound: (id: string) => `session file "${id}" not found`,
  unreadable: (id: string, reason: string) => `session file "${id}" could not be read: ${reason}`,
  empty: (id: string) => `session file "${id}" is empty`,
  tornHeader: (id: string) => `session file "${id}" has a torn header line`,
  notHeader: (id: string) => `session file "${id}" line 1 is not a session header`,
  unsupportedVersion: (id: string, version: unknown) =>
    `session file "${id}" has unsupported format version ${JSON.stringify(version)}`,
  otherSession: (id: string, other: string) => `session file "${id}" holds session "${other}"`,
  notEvent: (id: string, line: number) => `session file "${id}" line ${line} is not a valid session event`,
  wrongSeq: (id: string, line: number, seq: unknown, expected: number) =>
    `session file "${id}" line ${line} has seq ${JSON.stringify(seq)}, expected ${expected}`,
  // warnings: the plugin logs these and carries on
  tornTail: (id: string, kept: number) => `session file "${id}" had a torn last line; kept ${kept} events`,
  unsafeIdSkipped: (id: string) => `session id "${id}" is not a safe file name; the session is not persisted`,
  alreadyExists: (id: string) => `session file "${id}" already exists; the new session is not persisted`,
  headerUnreadable: (id: string, reason: string) =>
    `session file "${id}" has no readable header and is left out of its tree: ${reason}`,
  markerNotRemoved: (id: string, reason: string) =>
    `session "${id}" was resumed, but the disposal marker beside its file could not be removed: ${reason}`,
  writeFailed: (id: string, reason: string) =>
    `session file "${id}" could not be written: ${reason}; later events are not persisted`,
} as const
