/**
 * A streamed line of one child while others stream beside it: held until it is whole (the next
 * line starts, or the message ends) or the stream pauses, then written as one line, so children
 * streaming token by token interleave line by line, never chunk by chunk.
 */

/** Quiet time after which a held partial line is written anyway (it goes on on a line of its own). */
export const STREAM_PAUSE_MS = 400

export class SharedLine {
  /** The line's start (indent, label column, tag) and the text held after it; `undefined` when none is held. */
  #line: string | undefined
  #hasText = false
  #timer: ReturnType<typeof setTimeout> | undefined

  /** `write` receives each line whole; `continuation` starts a line that goes on after a pause. */
  constructor(
    private readonly write: (line: string) => void,
    private readonly continuation: string,
    private readonly pauseMs = STREAM_PAUSE_MS,
  ) {}

  /** Writes the line held so far (if it has text) and holds a new one starting with `start`. */
  start(start: string): void {
    this.flush()
    this.#line = start
    this.#hasText = false
  }

  /** Adds text to the held line; a pause of `pauseMs` writes it as it is. */
  add(text: string): void {
    this.#line = (this.#line ?? this.continuation) + text
    this.#hasText = true
    clearTimeout(this.#timer)
    this.#timer = setTimeout(() => this.#pause(), this.pauseMs)
    // a printer must never hold the process open
    this.#timer.unref?.()
  }

  /** Writes what is held; nothing is held afterwards. */
  flush(): void {
    clearTimeout(this.#timer)
    this.#timer = undefined
    if (this.#line !== undefined && this.#hasText) this.write(this.#line)
    this.#line = undefined
    this.#hasText = false
  }

  #pause(): void {
    this.#timer = undefined
    if (!this.#hasText) return
    this.write(this.#line!)
    // the rest of the line follows on a line of its own, tagged like it
    this.#line = this.continuation
    this.#hasText = false
  }
}
