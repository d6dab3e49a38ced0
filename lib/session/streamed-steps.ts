/**
 * A long streamed step's deltas, stored once. The loop streams a step's text into its
 * own list of pieces and appends one `assistant/delta` per piece; past the first
 * `plainDeltasPerStep` of a step, each delta is a compact event that keeps only its `seq` and reads
 * its text from that list, and once the step's `assistant/message` is appended, from the message's
 * text (the pieces joined) through offsets. A compact event still reads as a frozen
 * `{seq, type, data}`: own enumerable keys in that order, `Object.prototype` as prototype, `data`
 * an own getter that makes a frozen `{turn, step, text}` on the first read and returns that same
 * object on every later read, so `JSON.stringify`, spread, `structuredClone` and deep equality see
 * what a plain event holds. Plain code: no cordis, no I/O.
 */
import type { SessionEvent, SessionEventData } from '../types.ts'

type DeltaData = SessionEventData['assistant/delta']

/** A step's texts in order, as the loop keeps them (`TextPieces`) or as a stored log gives them (an array). */
export interface PieceList {
  at(index: number): string | undefined
}

/**
 * The deltas of a step before this many stay plain events: a step with a few deltas (a short
 * answer) costs what it always did, and a compacted step pays its fixed part (about 1 KB: the
 * record, its event constructor and the shapes V8 makes for it) only when it has many deltas to
 * share it with.
 */
export const plainDeltasPerStep = 32

/** The record behind each compact event's `data` getter, to read a text without making `data`. */
const recordsByGetter = new WeakMap<object, StreamedStep>()

interface DeltaFields {
  seq: number
  type: string
}

/**
 * The compact deltas of one step, `firstSeq` on, contiguous. Each record has its own event
 * constructor: its events then share one hidden class whose `data` getter knows the record (a
 * getter shared by several records would turn every event into a dictionary object).
 */
export class StreamedStep {
  #pieces: PieceList | undefined
  #text = ''
  #offsets: Uint32Array | undefined
  #count = 0
  #materialized: (DeltaData | undefined)[] | undefined
  readonly #Event: new (seq: number) => SessionEvent<'assistant/delta'>

  /**
   * `pieces` is the loop's list of the step's texts so far, read while the step streams;
   * `pieces.at(firstPiece)` is the text of the delta with `seq = firstSeq`.
   */
  constructor(
    readonly turn: number,
    readonly step: number,
    pieces: PieceList,
    private readonly firstPiece: number,
    readonly firstSeq: number,
  ) {
    this.#pieces = pieces
    const record = this
    const data: PropertyDescriptor = {
      get(this: DeltaFields): DeltaData {
        return record.dataAt(this.seq)
      },
      enumerable: true,
    }
    // a function, not a class or a literal: `data` must be an own accessor, the prototype must be
    // `Object.prototype`, and every event of the record must share one shape
    function StreamedDelta(this: DeltaFields, seq: number): void {
      this.seq = seq
      this.type = 'assistant/delta'
      Object.defineProperty(this, 'data', data)
      Object.freeze(this)
    }
    StreamedDelta.prototype = Object.prototype
    this.#Event = StreamedDelta as unknown as new (seq: number) => SessionEvent<'assistant/delta'>
    recordsByGetter.set(data.get as object, this)
  }

  /** True when the next compact event may have `seq` (the record's events are contiguous). */
  continuesAt(seq: number): boolean {
    return !this.#offsets && seq === this.firstSeq + this.#count
  }

  /** The compact event of the next piece; `seq` must pass `continuesAt`. */
  next(seq: number): SessionEvent<'assistant/delta'> {
    this.#count++
    return new this.#Event(seq)
  }

  /**
   * The step's message holds `text`, the pieces joined: read from it from now on and let the
   * pieces go.
   */
  settle(text: string): void {
    const pieces = this.#pieces
    if (!pieces || this.#offsets) return
    let offset = 0
    for (let i = 0; i < this.firstPiece; i++) offset += (pieces.at(i) as string).length
    const offsets = new Uint32Array(this.#count + 1)
    for (let i = 0; i < this.#count; i++) {
      offsets[i] = offset
      offset += (pieces.at(this.firstPiece + i) as string).length
    }
    offsets[this.#count] = offset
    this.#text = text
    this.#offsets = offsets
    this.#pieces = undefined
  }

  textAt(seq: number): string {
    const i = seq - this.firstSeq
    const offsets = this.#offsets
    if (offsets) return this.#text.slice(offsets[i], offsets[i + 1])
    return (this.#pieces as PieceList).at(this.firstPiece + i) as string
  }

  dataAt(seq: number): DeltaData {
    const i = seq - this.firstSeq
    const materialized = (this.#materialized ??= [])
    let data = materialized[i]
    if (!data) {
      data = Object.freeze({ turn: this.turn, step: this.step, text: this.textAt(seq) })
      materialized[i] = data
    }
    return data
  }
}

function recordOf(event: SessionEvent): StreamedStep | undefined {
  if (event.type !== 'assistant/delta') return undefined
  const getter = Object.getOwnPropertyDescriptor(event, 'data')?.get
  return getter ? recordsByGetter.get(getter) : undefined
}

/** True for a compact event (`StreamedStep`); its data is JSON by construction. */
export function isCompactDelta(event: SessionEvent): boolean {
  return recordOf(event) !== undefined
}

const deltaKeys = ['turn', 'step', 'text']

/**
 * The turn, step and text of an `assistant/delta` shaped as the loop writes it (data with exactly
 * the own keys `turn`, `step`, `text` in that order: numbers and a non-empty string), read without
 * making a compact event's `data`; `undefined` for any other event. An event rebuilt from them
 * reads and serializes the same, so `SessionFiles` may write such deltas as one run.
 */
export function streamedDelta(event: SessionEvent): DeltaData | undefined {
  if (event.type !== 'assistant/delta') return undefined
  const record = recordOf(event)
  if (record) return { turn: record.turn, step: record.step, text: record.textAt(event.seq) }
  const data = event.data as Partial<DeltaData> | null
  if (typeof data !== 'object' || data === null || Object.getPrototypeOf(data) !== Object.prototype) return undefined
  let index = 0
  for (const key in data) {
    if (!Object.hasOwn(data, key) || key !== deltaKeys[index++]) return undefined
  }
  const { turn, step, text } = data
  if (index !== 3 || typeof turn !== 'number' || typeof step !== 'number' || typeof text !== 'string' || !text) return undefined
  return data as DeltaData
}

/**
 * Stores the long steps of a log read back from a store as the live session held them: for each
 * `assistant/message` with a leading text block, the uninterrupted run of its step's streamed
 * deltas right before it, when their texts joined are exactly that text, becomes plain for the
 * first `plainDeltasPerStep` and compact after. Replaces events in place (same `seq`, same index)
 * and returns how many; leaves anything else as it is.
 */
export function compactStoredSteps(events: SessionEvent[]): number {
  let compacted = 0
  for (let index = 0; index < events.length; index++) {
    const message = events[index]
    if (message.type !== 'assistant/message') continue
    const { turn, step, content } = message.data as Partial<SessionEventData['assistant/message']>
    const head = Array.isArray(content) ? content[0] : undefined
    if (head?.type !== 'text' || typeof head.text !== 'string') continue
    let first = index
    while (first > 0) {
      const delta = streamedDelta(events[first - 1])
      if (!delta || delta.turn !== turn || delta.step !== step || isCompactDelta(events[first - 1])) break
      first--
    }
    if (index - first <= plainDeltasPerStep) continue
    const pieces = events.slice(first, index).map((event) => (event.data as DeltaData).text)
    if (pieces.join('') !== head.text) continue
    const stream = new StreamedStep(turn as number, step as number, pieces, plainDeltasPerStep, events[first + plainDeltasPerStep].seq)
    for (let i = first + plainDeltasPerStep; i < index; i++) events[i] = stream.next(events[i].seq)
    stream.settle(head.text)
    compacted += index - first - plainDeltasPerStep
  }
  return compacted
}
