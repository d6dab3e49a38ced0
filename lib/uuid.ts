/**
 * Random UUIDs stored compactly. Plain code: no cordis, no I/O.
 */
import { randomFillSync } from 'node:crypto'

/** UUIDs' worth of random bytes drawn from the CSPRNG at once (one call per 128 ids). */
const POOL_SIZE = 128
const pool = new Uint8Array(16 * POOL_SIZE)
let drawn = POOL_SIZE
/** The ASCII text of one id is written here, then read back as one string. */
const text = Buffer.alloc(64)
const MAX_PREFIX = text.length - 36
const printable = /^[\x21-\x7e]*$/
/** The two ASCII hex digits of every byte value. */
const hexDigits = Buffer.from(Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0')).join(''), 'latin1')

/**
 * A fresh random version-4 UUID (RFC 9562: 122 random bits from `crypto.randomFillSync`, the
 * version and variant bits set), or `prefix` followed by one, as one flat string.
 *
 * Why not `crypto.randomUUID()`: Node builds its text by concatenating 20 pieces, so V8 keeps a
 * rope of about 14 string objects (≈ 480 B) until something flattens it, and agent and call ids
 * live as long as their agent. Flattening it afterwards costs more than writing the text once:
 * reading a character does not flatten it once the code is optimized (Node 22 kept the rope), and
 * `toLowerCase()` does, at ≈ 150 ns. Here the 36 (or more) ASCII bytes are written into a buffer
 * and read back as one sequential string (≈ 56 B), faster than `randomUUID()` itself.
 *
 * Throws `RangeError` for a prefix that is not printable ASCII (no spaces) of at most 28 characters.
 */
export function flatUuid(prefix = ''): string {
  // the unprefixed id (every child's) skips the pattern: a regexp call costs more than the check
  if (prefix !== '' && (prefix.length > MAX_PREFIX || !printable.test(prefix))) {
    throw new RangeError(`flatUuid prefix must be printable ASCII of at most ${MAX_PREFIX} characters`)
  }
  if (drawn === POOL_SIZE) {
    randomFillSync(pool)
    drawn = 0
  }
  const at = 16 * drawn++
  let end = prefix ? text.write(prefix, 0, 'latin1') : 0
  for (let i = 0; i < 16; i++) {
    if (i === 4 || i === 6 || i === 8 || i === 10) text[end++] = 0x2d // '-'
    let byte = pool[at + i]
    if (i === 6) byte = (byte & 0x0f) | 0x40 // version 4
    else if (i === 8) byte = (byte & 0x3f) | 0x80 // variant 10
    text[end++] = hexDigits[2 * byte]
    text[end++] = hexDigits[2 * byte + 1]
  }
  return text.toString('latin1', 0, end)
}
