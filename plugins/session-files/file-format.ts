/**
 * The session file format, version 3 (see README): one JSON value per line, each line ending in
 * `\n`. Line 1 is `{"version":3,"header":{…}}`; every later line is one event `{"seq","type","data"}`
 * or one run of a step's streamed deltas `{"seq","deltas":{"turn","step","texts"}}` that stands
 * for `texts.length` events from `seq` on; `seq` counts from 0 without gaps. A step's message whose
 * leading text is its deltas' texts joined leaves that text out (`"streamed":true`). A disposed
 * session's file ends with the disposal record `{"disposed":true}`. Versions 2 (no disposal
 * record) and 1 (no runs either) are still read. Plain code: no I/O here.
 */
import { streamedDelta } from '../../lib/session/streamed-steps.ts'
import type { SessionEvent, SessionHeader } from '../../lib/types.ts'
import { buildHeader } from '../../lib/session/session-header.ts'
import { messages, SessionFileError } from './errors.ts'

export const formatVersion = 3

/** Versions a reader accepts: version 2 is version 3 without the disposal record, version 1 also without runs. */
const readableVersions: readonly unknown[] = [1, 2, 3]

/** The disposal record, newline included: the last line of a disposed session's file. */
export const disposalLine = '{"disposed":true}\n'
const disposalRecord = disposalLine.slice(0, -1)

/** The file name suffix; `<dir>/<id>.jsonl`. */
export const fileSuffix = '.jsonl'

// leaves room for the suffix and a temp-file tail within the usual 255-byte name limit
const maxIdBytes = 200

/**
 * Rejects ids that cannot be used verbatim as a file name inside the folder: empty, longer than
 * 200 bytes in UTF-8, containing `/`, `\`, `..` or a control character, or `.` alone.
 */
export function assertSessionId(id: unknown): asserts id is string {
  if (typeof id !== 'string' || !isSafeSessionId(id)) {
    throw new SessionFileError(String(id), messages.unsafeId(String(id)))
  }
}

export function isSafeSessionId(id: string): boolean {
  if (!id || id === '.' || id.includes('..') || Buffer.byteLength(id) > maxIdBytes) return false
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it rejects
  return !/[/\\\u0000-\u001f\u007f]/.test(id)
}

/** The header line, newline included. */
export function encodeHeader(header: SessionHeader): string {
  return `${JSON.stringify({ version: formatVersion, header })}\n`
}

/**
 * One event line, newline included. `undefined` data is written as `null` (JSON has no
 * `undefined`); data that `JSON.stringify` cannot render (a `BigInt`, a cycle) throws.
 */
export function encodeEvent(event: SessionEvent): string {
  return `${JSON.stringify({ seq: event.seq, type: event.type, data: event.data ?? null })}\n`
}

/**
 * One run line, newline included: the streamed deltas `seq`, `seq + 1`, … of one step, each
 * `{turn, step, text}` with a text of `texts` (`lib/session/streamed-steps.ts`'s `streamedDelta` shape).
 */
export function encodeRun(seq: number, turn: number, step: number, texts: readonly string[]): string {
  return `${JSON.stringify({ seq, deltas: { turn, step, texts } })}\n`
}

/**
 * The line of an `assistant/message` of `step`'s turn and step whose leading text block is
 * `{type: 'text', text}` with `text` the step's deltas' texts (right before it) joined: the block is
 * written `{"type":"text"}` and the line marked `"streamed":true`, and the reader joins the deltas'
 * texts back. `undefined` for any other event (it gets an ordinary line).
 */
export function encodeStreamedMessage(event: SessionEvent, step: StepTexts): string | undefined {
  const data = event.data
  if (event.type !== 'assistant/message' || !isRecord(data) || !Array.isArray(data.content)) return undefined
  if (data.turn !== step.turn || data.step !== step.step) return undefined
  const head: unknown = data.content[0]
  if (!isRecord(head) || !isTextBlockShape(head, 2) || head.text !== step.texts.join('')) return undefined
  const content = data.content.slice()
  content[0] = { type: 'text' }
  return `${JSON.stringify({ seq: event.seq, type: event.type, data: { ...data, content }, streamed: true })}\n`
}

/** `{type: 'text', …}` with exactly `size` own keys, `type` first (then `text`), plain. */
function isTextBlockShape(block: Record<string, unknown>, size: 1 | 2): boolean {
  if (Object.getPrototypeOf(block) !== Object.prototype || block.type !== 'text') return false
  const keys = Object.keys(block)
  return keys.length === size && keys[0] === 'type' && (size === 1 || keys[1] === 'text')
}

/** The texts of the streamed deltas read since the last other event, with their step. */
export interface StepTexts { turn: number; step: number; texts: string[] }

/**
 * Follows `event` in `current`: a streamed delta of the same step adds its text (to `current`
 * itself), another delta starts a new record, anything else ends it (`undefined`).
 */
export function followStep(current: StepTexts | undefined, event: SessionEvent): StepTexts | undefined {
  const delta = streamedDelta(event)
  if (!delta) return undefined
  if (current && current.turn === delta.turn && current.step === delta.step) {
    current.texts.push(delta.text)
    return current
  }
  return { turn: delta.turn, step: delta.step, texts: [delta.text] }
}

/** The message a `"streamed":true` line stands for, its text joined from `step`; `undefined` when malformed. */
function restoreStreamedMessage(value: Record<string, unknown>, step: StepTexts | undefined): unknown {
  const data = value.data
  if (value.type !== 'assistant/message' || !step || !isRecord(data) || !Array.isArray(data.content)) return undefined
  const head: unknown = data.content[0]
  if (data.turn !== step.turn || data.step !== step.step || !isRecord(head) || !isTextBlockShape(head, 1)) return undefined
  const content = data.content.slice()
  content[0] = { type: 'text', text: step.texts.join('') }
  return { ...data, content }
}

/** The events a well-formed run line stands for, or `undefined` when it is not one. */
function expandRun(value: Record<string, unknown>, seq: number): SessionEvent[] | undefined {
  const run = value.deltas
  if (!isRecord(run) || Object.keys(value).length !== 2) return undefined
  const { turn, step, texts } = run
  if (typeof turn !== 'number' || typeof step !== 'number' || !Array.isArray(texts) || !texts.length) return undefined
  const events: SessionEvent[] = []
  for (const text of texts) {
    if (typeof text !== 'string' || !text) return undefined
    events.push({ seq: seq + events.length, type: 'assistant/delta', data: { turn, step, text } })
  }
  return events
}

export interface ParsedSessionFile {
  header: SessionHeader
  events: SessionEvent[]
  /** True when the file ended in a line without its `\n`; that line was dropped. */
  isTorn: boolean
  /** True when the file ends with the disposal record: the session's agent was disposed. */
  isDisposed: boolean
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * Parses a whole file. Only `\n`-terminated lines count: a last line without one is torn (a write
 * cut short) and dropped. Anything else malformed throws `SessionFileError`; a malformed header
 * field throws the host's header error unchanged.
 */
export function parseSessionFile(id: string, text: string): ParsedSessionFile {
  if (!text) throw new SessionFileError(id, messages.empty(id))
  const end = text.lastIndexOf('\n')
  if (end < 0) throw new SessionFileError(id, messages.tornHeader(id))
  const lines = text.slice(0, end).split('\n')
  const first = parseJson(lines[0])
  if (!isRecord(first) || !('version' in first) || !isRecord(first.header)) {
    throw new SessionFileError(id, messages.notHeader(id))
  }
  if (!readableVersions.includes(first.version)) throw new SessionFileError(id, messages.unsupportedVersion(id, first.version))
  const hasRuns = first.version !== 1
  const hasDisposal = first.version === 3
  const header = buildHeader(first.header)
  if (header.id !== id) throw new SessionFileError(id, messages.otherSession(id, header.id))
  const events: SessionEvent[] = []
  let step: StepTexts | undefined
  let isDisposed = false
  for (let i = 1; i < lines.length; i++) {
    const line = i + 1
    // the disposal record ends the file: nothing is written after it
    if (hasDisposal && lines[i] === disposalRecord && i === lines.length - 1) {
      isDisposed = true
      break
    }
    const value = parseJson(lines[i])
    const seq = events.length
    if (hasRuns && isRecord(value) && 'deltas' in value) {
      const run = expandRun(value, seq)
      if (!run) throw new SessionFileError(id, messages.notEvent(id, line))
      if (value.seq !== seq) throw new SessionFileError(id, messages.wrongSeq(id, line, value.seq, seq))
      for (const event of run) {
        events.push(event)
        step = followStep(step, event)
      }
      continue
    }
    if (!isRecord(value) || typeof value.type !== 'string' || !value.type || !('data' in value)) {
      throw new SessionFileError(id, messages.notEvent(id, line))
    }
    if (value.seq !== seq) throw new SessionFileError(id, messages.wrongSeq(id, line, value.seq, seq))
    let data = value.data
    if (hasRuns && 'streamed' in value) {
      data = value.streamed === true ? restoreStreamedMessage(value, step) : undefined
      if (data === undefined) throw new SessionFileError(id, messages.notEvent(id, line))
    }
    const event: SessionEvent = { seq, type: value.type, data }
    events.push(event)
    step = followStep(step, event)
  }
  return { header, events, isTorn: end !== text.length - 1, isDisposed }
}

/**
 * True when `text` is the file of an earlier state of this very session: a valid file with the
 * header line `headerLine` (as `encodeHeader` writes it) whose complete event lines equal the first
 * events of `events` (a torn last line and a disposal record are ignored). Replacing such a file
 * with the session's own snapshot loses nothing: this is how a resumed session, or one read from
 * another store, takes its file back.
 */
export function holdsEarlierState(text: string, headerLine: string, events: readonly SessionEvent[]): boolean {
  let parsed: ParsedSessionFile
  try {
    parsed = parseSessionFile((JSON.parse(headerLine) as { header: SessionHeader }).header.id, text)
  } catch {
    return false
  }
  if (parsed.events.length > events.length || encodeHeader(parsed.header) !== headerLine) return false
  for (let i = 0; i < parsed.events.length; i++) {
    if (!isSameEvent(parsed.events[i], events[i])) return false
  }
  return true
}

/** Equal as the file writes them; a streamed delta is compared without making a compact one's `data`. */
function isSameEvent(stored: SessionEvent, live: SessionEvent): boolean {
  const delta = streamedDelta(live)
  if (!delta) return encodeEvent(stored) === encodeEvent(live)
  const other = streamedDelta(stored)
  return other !== undefined && stored.seq === live.seq && other.turn === delta.turn && other.step === delta.step && other.text === delta.text
}
