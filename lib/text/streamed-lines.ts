/**
 * Lays out text that arrives in pieces (a model's `assistant/delta` events) into lines of at most
 * `width` characters, breaking at spaces, and keeps at most `maxLines` lines — the same layout a
 * whole text gets from word wrapping, as long as no word is split across pieces at the margin.
 * Pure: it says what to write, the caller writes it.
 */

/** What to write: start line `index` (0: the first), or add text to the line started last. */
export type StreamedPiece = { kind: 'line'; index: number } | { kind: 'text'; text: string }

export class StreamedLines {
  /** Lines started so far, shown or not. */
  #lines = 0
  /** Characters on the current line; -1 before the first line. */
  #column = -1
  /** Indent of the current paragraph, kept on its wrapped lines. */
  #indent = ''
  /** True while the current paragraph has had no word yet (its leading spaces are its indent). */
  #atParagraphStart = true
  /** The previous piece ended inside a word: the next piece's first word continues it. */
  #inWord = false
  /** Line breaks read and not yet written. */
  #breaks = 0
  /** The last line allowed, held back until it is known whether another line follows it. */
  #held: string | undefined

  /** `width`: characters per line (at least 1); `maxLines`: lines shown (at least 2). */
  constructor(
    private readonly width: number,
    private readonly maxLines: number,
  ) {}

  /** Lays out the next piece of text. Leading and trailing blank lines are dropped, as `trim` would. */
  push(text: string): StreamedPiece[] {
    const out: StreamedPiece[] = []
    for (const token of text.split(/(\n| )/)) {
      if (token === '\n') {
        // written when more text follows: a trailing line break shows nothing
        if (this.#column >= 0) this.#breaks++
        this.#inWord = false
      } else if (token === ' ') {
        if (this.#column < 0) continue
        if (this.#breaks) this.#flushBreaks(out)
        if (this.#atParagraphStart) {
          this.#indent += ' '
          this.#emit(out, ' ')
        }
        this.#inWord = false
      } else if (token) {
        if (this.#column < 0) this.#newLine(out, '')
        if (this.#breaks) this.#flushBreaks(out)
        if (this.#inWord || this.#atParagraphStart) {
          this.#emit(out, token)
        } else if (this.#column > this.#indent.length && this.#column + 1 + token.length > this.width) {
          this.#newLine(out, this.#indent)
          this.#emit(out, token)
        } else {
          this.#emit(out, this.#column > this.#indent.length ? ` ${token}` : token)
        }
        this.#atParagraphStart = false
        this.#inWord = true
      }
    }
    return out
  }

  #flushBreaks(out: StreamedPiece[]): void {
    for (; this.#breaks; this.#breaks--) this.#newLine(out, '')
    this.#atParagraphStart = true
    this.#indent = ''
  }

  /**
   * Ends the text: the held last line if nothing followed it, and the number of lines not shown
   * (0 when all were).
   */
  end(): { pieces: StreamedPiece[]; hidden: number } {
    const pieces: StreamedPiece[] = []
    const hidden = this.#lines > this.maxLines ? this.#lines - (this.maxLines - 1) : 0
    if (!hidden && this.#held !== undefined) pieces.push({ kind: 'line', index: this.maxLines - 1 }, { kind: 'text', text: this.#held })
    this.#held = undefined
    return { pieces, hidden }
  }

  /** Whether anything was laid out. */
  get started(): boolean {
    return this.#column >= 0
  }

  /** The caller broke the line (another agent wrote in between): go on as on a fresh line. */
  resume(): void {
    if (this.#column > 0) this.#column = 0
  }

  #newLine(out: StreamedPiece[], indent: string): void {
    const index = this.#lines++
    this.#column = 0
    if (index < this.maxLines - 1) out.push({ kind: 'line', index })
    else if (index === this.maxLines - 1) this.#held = ''
    else this.#held = undefined
    this.#emit(out, indent)
  }

  #emit(out: StreamedPiece[], text: string): void {
    if (!text) return
    this.#column += text.length
    const index = this.#lines - 1
    if (index < this.maxLines - 1) out.push({ kind: 'text', text })
    else if (index === this.maxLines - 1 && this.#held !== undefined) this.#held += text
  }
}
