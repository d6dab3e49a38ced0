/**
 * Random UUIDs stored compactly. Plain code: no cordis, no I/O.
 */
import { randomUUID } from 'node:crypto'

/**
 * A fresh random UUID (`crypto.randomUUID()`), or `prefix` (lowercase ASCII) followed by one, as
 * one flat string. Node builds the UUID by concatenating its 20 pieces, so V8 keeps a rope of about
 * 14 string objects (≈ 480 B) until something flattens it. Agent and call ids live as long as their
 * agent, so the rope would be the largest part of a finished child. `toLowerCase()` (the UUID is
 * lowercase already) copies it into one sequential string (≈ 48 B); reading a character does not
 * flatten reliably: optimized code walks the rope and leaves it in place.
 */
export function flatUuid(prefix = ''): string {
  return (prefix + randomUUID()).toLowerCase()
}
