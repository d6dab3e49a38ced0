/**
 * The texts a step streamed, in order, kept in chunks. One array of a long stream's
 * pieces would pass V8's regular object size (≈ 16,000 slots, 128 KB) and live in its
 * large-object space, where each growth of it is a fresh allocation on fresh pages (each page's
 * first touch costs ≈ 18 µs on the benchmark VM): chunks of `textChunkLength` stay ordinary young
 * objects however long the stream. Plain code: no cordis, no I/O.
 */

/** Pieces per chunk: 4,096 slots (32 KB) is far below the large-object threshold. */
export const textChunkLength = 4096

export class TextPieces {
  // `declare`d fields, assigned in the constructor: see docs/performance.md, "Declared fields"
  private declare readonly chunks: string[][]
  private declare count: number

  /** A list of a step's first two pieces: a step with one piece keeps it alone, not in a list. */
  constructor(first: string, second: string) {
    this.chunks = [[first, second]]
    this.count = 2
  }

  /** How many pieces the list holds. */
  get length(): number {
    return this.count
  }

  /** Adds `text` after the last piece. */
  push(text: string): void {
    const { chunks } = this
    const last = chunks[chunks.length - 1]
    if (last.length < textChunkLength) last.push(text)
    else chunks.push([text])
    this.count++
  }

  /** The piece at `index` (0-based, non-negative), or `undefined` past the end, as an array's `at`. */
  at(index: number): string | undefined {
    if (index >= this.count) return undefined
    return this.chunks[Math.floor(index / textChunkLength)][index % textChunkLength]
  }

  /** Every piece joined, in order: one flat string. */
  join(): string {
    const { chunks } = this
    if (chunks.length === 1) return chunks[0].join('')
    return chunks.map((chunk) => chunk.join('')).join('')
  }
}
