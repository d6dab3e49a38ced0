/**
 * Random UUIDs stored compactly. Plain code: no cordis, no I/O.
 */
import { randomUUID } from 'node:crypto'

/**
 * A fresh random UUID (`crypto.randomUUID()`), or `prefix` followed by one, as one flat string.
 * Node builds the UUID by concatenating its 20 pieces, so V8 keeps a rope of about 20 string
 * objects (≈ 480 B) until something flattens it; reading one character flattens it in place
 * (≈ 56 B). Agent and call ids live as long as their agent, so the rope would be the largest part
 * of a finished child.
 */
export function flatUuid(prefix = ''): string {
  const id = prefix + randomUUID()
  id.charCodeAt(0)
  return id
}
