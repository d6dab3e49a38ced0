/**
 * One session file's write queue. Writes run one at a time in the order they were queued, so
 * lines never interleave; an idle queue starts on the event loop's next turn, each write waits for
 * a slot of the plugin's shared `OpenFileGate`, and lines queued until its write starts (until
 * that turn, while it waits for a slot or another write runs) go out with it: an agent created,
 * run and disposed within one turn costs its file one write, its disposal record included.
 * Events are encoded when the write that carries them starts (or on a flush), not as they happen:
 * the agent's own turn pays nothing for its file, the writer keeps the session's event list (whose
 * events are frozen) rather than lines, and the lines come out as eager encoding would make them.
 * A step's streamed deltas are held back and written as one run line once the run ends (another
 * event, a flush, the release, or `maxRunDeltas`): the file stays a prefix of the session, and a
 * crash mid-stream loses the held run, a tail, as a torn line would.
 */
import { randomUUID } from 'node:crypto'
import { streamedDelta } from '../../lib/session/streamed-steps.ts'
import type { Session, SessionEvent, SessionHeader } from '../../lib/types.ts'
import {
  disposalLine,
  encodeEvent,
  encodeHeader,
  encodeRun,
  encodeStreamedMessage,
  fileSuffix,
  followStep,
  holdsEarlierState,
  parseSessionFile,
  type StepTexts,
} from './file-format.ts'
import type { SessionFileSystem } from './file-system.ts'
import type { OpenFileGate } from './open-file-gate.ts'

/**
 * `create`: a newly published session; refuses to replace an existing file (`EEXIST`) unless that
 * file holds an earlier state of the same session (a resume). `replace`: an adopted session; the
 * snapshot atomically replaces the file (temp + rename).
 */
export type StartMode = 'create' | 'replace'

interface Operation {
  kind: StartMode | 'append'
  /**
   * Its lines, in order, joined when the write starts, and when its session is released (one flat
   * string, not a string per line, waits for the write; only the encoding of the events still
   * unencoded then, the held run and the disposal record may follow it); a snapshot's begin with
   * its header line.
   */
  parts: string[]
  /** How many queued items (a snapshot, or one event line each) this write completes. */
  units: number
  /**
   * For a snapshot: how many events it holds. Its own lines tell which (read back, they are the
   * session's events), so nothing of the session is kept to recognise the session's own file.
   */
  count?: number
  /** Its write has started: later lines go into a new operation. */
  isSealed?: boolean
}

interface Waiter { target: number; resolve: () => void }

/** The deltas one run line holds at most: bounds what a crash mid-stream loses, and a line's size. */
export const maxRunDeltas = 1000

/** Streamed deltas of one step not written yet, `seq` on. */
interface HeldRun { seq: number; turn: number; step: number; texts: string[] }

/** Shared by every writer of one plugin instance. */
export interface WriterHooks {
  /** The folder, with a trailing separator: a file's path is this, the id and `.jsonl`. */
  folder: string
  /** Awaited before the first write (the folder exists). */
  ready: Promise<void>
  /** Shared by every writer of the plugin: bounds the descriptors open at once. */
  gate: OpenFileGate
  fs: SessionFileSystem
  /**
   * The writer stopped: a write failed (what was queued is dropped) or an event could not be
   * encoded (what was queued before it is still written; reported when the write that would have
   * carried it starts, or on a flush). Must not throw.
   */
  onFailure(writer: SessionWriter, error: unknown): void
  /** The writer was released and is now idle: its owner may forget it. Must not throw. */
  onRelease(writer: SessionWriter): void
  /** A new session replaced its own earlier file (a resume published it again). Must not throw. */
  onResumed?(writer: SessionWriter): void
}

export class SessionWriter {
  /** Writers whose idle queue got a write: they start together on the event loop's next turn. */
  private static starting: SessionWriter[] = []

  /** The session whose events this writer follows; `undefined` once released. */
  session?: Session
  /**
   * The followed session's event list, kept past the release while events of it wait for their
   * encoding (the list, not the session: a session holds its agent's scope).
   */
  private events?: readonly SessionEvent[]
  /** Events from `next` on were seen and belong at the end of the last queued write. */
  private unencoded = false
  /** A snapshot waits for its encoding: `header`, then the events before this index; -1 when none does. */
  private snapshotEnd = -1
  private header?: SessionHeader
  /**
   * The session went away with events unencoded: how many it had then (later ones were never
   * followed); their encoding ends the run held, then `releaseLine`. -1 when no release waits.
   */
  private releaseEnd = -1
  /** The disposal record, when the release that waits had one. */
  private releaseLine = ''
  private readonly queue: Operation[] = []
  /** Next `seq` to encode. */
  private next = 0
  private queued = 0
  private done = 0
  private active = false
  private failed = false
  private released = false
  private waiters?: Waiter[]
  private held?: HeldRun
  /** The texts of the current step's deltas so far: its message leaves them out when it repeats them. */
  private stepTexts?: StepTexts

  constructor(readonly id: string, private readonly hooks: WriterHooks) {}

  /** The session's file; made when needed, not kept by a writer waiting to write. */
  get path(): string {
    return this.hooks.folder + this.id + fileSuffix
  }

  /** Queues the header and every event so far (encoded when the write starts); later events come through `follow`. */
  start(session: Session, mode: StartMode): void {
    // what an earlier session left unencoded goes before this snapshot
    this.catchUp()
    this.session = session
    this.events = session.events
    this.failed = false
    this.released = false
    this.next = 0
    this.held = undefined
    this.stepTexts = undefined
    this.header = session.header
    this.snapshotEnd = session.events.length
    this.unencoded = true
    this.push({ kind: mode, parts: [], units: 1, count: this.snapshotEnd })
  }

  /**
   * Queues the events of `session` not written yet, to be encoded when their write starts;
   * ignored for any other session.
   */
  follow(session: Session): void {
    if (this.unencoded || this.failed || session !== this.session || this.next >= session.events.length) return
    this.unencoded = true
    this.queueAppend('')
  }

  /** Encodes the events seen and not encoded yet into the last queued write (the one they joined). */
  private catchUp(): void {
    if (!this.unencoded) return
    this.unencoded = false
    const events = this.events!
    let text: string | undefined = ''
    if (this.snapshotEnd >= 0) {
      // a snapshot whose events cannot all be encoded is not written at all
      text = this.encode(encodeHeader(this.header!), events, this.snapshotEnd, true)
      this.snapshotEnd = -1
      this.header = undefined
    }
    const end = this.releaseEnd >= 0 ? this.releaseEnd : events.length
    if (text !== undefined) text = this.encode(text, events, end, false)
    if (text) this.queueAppend(text)
    if (this.releaseEnd < 0) return
    this.releaseEnd = -1
    this.endLines(this.releaseLine)
  }

  /** The released session's last lines: the run held, then `line` (the disposal record, or `''`) unless the file failed. */
  private endLines(line: string): void {
    this.events = undefined
    this.stepTexts = undefined
    this.writeHeld()
    if (line && !this.failed) this.queueAppend(line)
  }

  private queueAppend(text: string): void {
    const last = this.queue[this.queue.length - 1]
    if (!last || last.isSealed) {
      this.push({ kind: 'append', parts: [text], units: 1 })
      return
    }
    last.parts.push(text)
    last.units++
    this.queued++
  }

  /**
   * The session went away: the owner is told once every queued write is done. `isDisposed` (its
   * agent was disposed) ends the file with the disposal record, unless a failure stopped the file.
   */
  release(isDisposed: boolean): void {
    if (this.unencoded) {
      // the events still unencoded come first: the disposal record follows their encoding
      this.releaseEnd = this.events!.length
      this.releaseLine = isDisposed ? disposalLine : ''
    } else {
      this.endLines(isDisposed ? disposalLine : '')
    }
    this.session = undefined
    this.released = true
    for (const operation of this.queue) if (!operation.isSealed) joined(operation)
    if (!this.active) this.hooks.onRelease(this)
  }

  /** Resolves once every write queued before the call is done or dropped by a failure. */
  flushed(): Promise<void> {
    this.catchUp()
    this.writeHeld()
    if (this.done >= this.queued) return Promise.resolve()
    return new Promise((resolve) => (this.waiters ??= []).push({ target: this.queued, resolve }))
  }

  /** Queues the held run, if any: a flush or the release writes everything seen so far. */
  private writeHeld(): void {
    if (!this.failed && this.held) this.queueAppend(this.takeHeld())
  }

  /** The held run's line (a lone delta as an ordinary event line), or `''`; holds nothing after. */
  private takeHeld(): string {
    const held = this.held
    if (!held) return ''
    this.held = undefined
    const { seq, turn, step, texts } = held
    if (texts.length > 1) return encodeRun(seq, turn, step, texts)
    return encodeEvent({ seq, type: 'assistant/delta', data: { turn, step, text: texts[0] } })
  }

  /** The lines of the events not encoded yet, up to `end`; a trailing run stays held unless `isFinal`. */
  private encode(prefix: string, events: readonly SessionEvent[], end: number, isFinal: boolean): string | undefined {
    let text = prefix
    try {
      for (let i = this.next; i < end; i++) {
        const event = events[i]
        const delta = streamedDelta(event)
        const step = this.stepTexts
        this.stepTexts = followStep(step, event)
        const held = this.held
        if (delta && held && held.turn === delta.turn && held.step === delta.step && held.texts.length < maxRunDeltas) {
          held.texts.push(delta.text)
          continue
        }
        text += this.takeHeld()
        if (delta) this.held = { seq: event.seq, turn: delta.turn, step: delta.step, texts: [delta.text] }
        else text += (step && encodeStreamedMessage(event, step)) || encodeEvent(event)
      }
      if (isFinal) text += this.takeHeld()
    } catch (error) {
      // what was queued before this event is still good: let it reach the file, with the run
      // that was held before it
      if (!isFinal && text) this.queueAppend(text)
      this.fail(error, false)
      return undefined
    }
    this.next = end
    return text
  }

  private push(operation: Operation): void {
    this.queue.push(operation)
    this.queued += operation.units
    if (this.active) return
    this.active = true
    if (SessionWriter.starting.push(this) === 1) setImmediate(SessionWriter.startAll)
  }

  private static startAll(): void {
    const writers = SessionWriter.starting
    SessionWriter.starting = []
    for (const writer of writers) void writer.drain()
  }

  private async drain(): Promise<void> {
    try {
      await this.hooks.ready
      while (this.queue.length) {
        // stays open to more lines until a slot is free and its write starts
        const operation = this.queue[0]
        await this.hooks.gate.run(() => {
          // the events seen by now join the write that starts
          if (operation === this.queue[this.queue.length - 1]) this.catchUp()
          operation.isSealed = true
          return this.perform(operation)
        })
        this.queue.shift()
        this.done += operation.units
        this.settle()
      }
    } catch (error) {
      // the file's state is unknown past this point: later lines would leave a gap in it
      this.fail(error, true)
    }
    this.active = false
    if (this.released) this.hooks.onRelease(this)
  }

  private async perform(operation: Operation): Promise<void> {
    const { fs } = this.hooks
    const text = joined(operation)
    // a snapshot whose encoding failed is not made; an append of held deltas alone has no line yet
    if (!text) return
    if (operation.kind === 'append') return fs.append(this.path, text)
    if (operation.kind === 'create') {
      try {
        return await fs.create(this.path, text)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || !(await this.holdsEarlierState(operation))) throw error
      }
      await this.replaceWith(text)
      this.hooks.onResumed?.(this)
      return
    }
    await this.replaceWith(text)
  }

  /** Replaces the file atomically: a temp file in the same folder, then a rename. */
  private async replaceWith(text: string): Promise<void> {
    const { fs } = this.hooks
    const temp = `${this.path}.${randomUUID()}.tmp`
    try {
      await fs.create(temp, text)
      await fs.rename(temp, this.path)
    } catch (error) {
      await fs.remove(temp)
      throw error
    }
  }

  private async holdsEarlierState(operation: Operation): Promise<boolean> {
    const text = await this.hooks.fs.read(this.path)
    const lines = joined(operation)
    let own: SessionEvent[]
    try {
      own = parseSessionFile(this.id, lines).events
    } catch {
      return false
    }
    return holdsEarlierState(text, lines.slice(0, lines.indexOf('\n') + 1), own.slice(0, operation.count))
  }

  /**
   * Stops following the session; `dropQueued` also drops the writes not done yet, and the events
   * waiting for their encoding with them: the file's state is unknown, so nothing seen before the
   * failure may reach it after (a gap, or lines in a file this writer did not make).
   */
  private fail(error: unknown, dropQueued: boolean): void {
    if (dropQueued) {
      this.queue.length = 0
      this.done = this.queued
      // what waits for its encoding is written by `catchUp` only, and only while `unencoded`
      this.unencoded = false
      if (this.releaseEnd >= 0) {
        this.releaseEnd = -1
        this.events = undefined
        this.stepTexts = undefined
      }
      this.settle()
    }
    if (this.failed) return
    this.failed = true
    this.hooks.onFailure(this, error)
  }

  private settle(): void {
    if (!this.waiters?.length) return
    const done = this.done
    const ready = this.waiters.filter((waiter) => waiter.target <= done)
    if (!ready.length) return
    this.waiters = this.waiters.filter((waiter) => waiter.target > done)
    for (const waiter of ready) waiter.resolve()
  }
}

/** The operation's lines as one string, kept so. */
function joined(operation: Operation): string {
  const { parts } = operation
  if (parts.length !== 1) operation.parts = [parts.join('')]
  return operation.parts[0]!
}
