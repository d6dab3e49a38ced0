/**
 * The session header rule (SPEC §1.2), shared by the host's sessions and the session files that
 * load a header back. Pure: no cordis, no I/O.
 */
import { isNonNegativeSafeInteger } from './depth.ts'
import { SubagentError } from './errors.ts'
import type { SessionHeader } from './types.ts'

const headerStrings = ['cwd', 'parentSession', 'label', 'callId'] as const
const headerIntegers = ['delegationDepth', 'seedLength'] as const

/**
 * Builds a frozen header, rejecting malformed fields with
 * `session header <field> must be a non-negative safe integer` (and similar for strings).
 */
export function buildHeader(fields: Record<string, unknown>): SessionHeader {
  if (typeof fields.id !== 'string' || !fields.id) {
    throw new SubagentError('INVALID_SESSION', 'session header id must be a non-empty string')
  }
  if (typeof fields.createdAt !== 'number' || !Number.isFinite(fields.createdAt)) {
    throw new SubagentError('INVALID_SESSION', 'session header createdAt must be a finite number')
  }
  const header: Record<string, unknown> = { id: fields.id, createdAt: fields.createdAt }
  // indexed loops over shared key lists: every creation builds a header, and a `for…of` over a
  // literal array builds the array and an iterator result per key until the JIT takes over
  for (let i = 0; i < headerStrings.length; i++) {
    const key = headerStrings[i]!
    if (fields[key] === undefined) continue
    if (typeof fields[key] !== 'string') {
      throw new SubagentError('INVALID_SESSION', `session header ${key} must be a string`)
    }
    header[key] = fields[key]
  }
  if (fields.origin !== undefined) {
    if (fields.origin !== 'subagent') {
      throw new SubagentError('INVALID_SESSION', 'session header origin must be "subagent"')
    }
    header.origin = fields.origin
  }
  for (let i = 0; i < headerIntegers.length; i++) {
    const key = headerIntegers[i]!
    if (fields[key] === undefined) continue
    if (!isNonNegativeSafeInteger(fields[key])) {
      throw new SubagentError('INVALID_SESSION', `session header ${key} must be a non-negative safe integer`)
    }
    header[key] = fields[key]
  }
  return Object.freeze(header) as unknown as SessionHeader
}
