/**
 * The console view of a host: every agent's conversation as it happens — a model's text streamed
 * as its deltas arrive — children indented under their parent by depth, with labels, stop reasons,
 * usage, timing and structured values. It only observes: session events and the driver's
 * `subagent/*` hooks, fed to it by `printTranscript` or the `Transcript` plugin (`index.ts`).
 */
import type {
  ContentBlock,
  Session,
  SessionEvent,
  SubagentInfo,
  SubagentResult,
  TurnEndReason,
  Usage,
} from '../../lib/types.ts'
import type {} from '../host/index.ts'
import type {} from '../inprocess-run/index.ts'
import { textOf } from '../../lib/content.ts'
import { isKnownEvent } from '../../lib/session/session-event.ts'
import { StreamedLines, type StreamedPiece } from '../../lib/text/streamed-lines.ts'
import { printable } from '../../lib/text/terminal-text.ts'
import { diagnosticIn, hasText, type Locale, text } from '../../locales/index.ts'
import { SharedLine } from './shared-line.ts'

/** How much the console shows: `quiet` only summaries and errors, `verbose` hook lines too. */
export type Verbosity = 'quiet' | 'normal' | 'verbose'

const LABEL_WIDTH = 11

type Label = 'user' | 'assistant' | 'tool' | 'task' | 'structured' | 'plugin' | 'hook' | ''

interface SessionView {
  depth: number
  /** The run's label, once `subagent/start` named the child. */
  label?: string
  /** Events seen before the child was announced by `subagent/start`. */
  pending?: SessionEvent[]
  turnStartedAt?: number
  turnUsage: Usage
  /** The assistant text being streamed, from its first delta to its message. */
  stream?: StreamedLines
  /** While other children stream beside it: its lines, each written whole (`shared-line.ts`). */
  shared?: SharedLine
  /** The aligned tag every one of those lines starts with. */
  sharedTag?: string
}

interface RunView {
  startedAt: number
  label?: string
  result?: SubagentResult
}

/** `<input> in / <output> out tokens` (`transcript.tokens`), numbers grouped by thousands. */
export function formatTokens(usage: Usage, locale: Locale): string {
  return text(locale, 'transcript.tokens', {
    input: usage.inputTokens.toLocaleString(locale),
    output: usage.outputTokens.toLocaleString(locale),
  })
}

function formatUsage(usage: Usage | undefined, locale: Locale): string | undefined {
  if (!usage || (!usage.inputTokens && !usage.outputTokens)) return undefined
  return formatTokens(usage, locale)
}

/** A turn's end or a child's stop reason in words; a kind without a text is shown as it is. */
function outcomeText(kind: string, locale: Locale): string {
  const key = `transcript.outcome.${kind}`
  return hasText(key) ? text(locale, key) : kind
}

function reasonText(reason: TurnEndReason, locale: Locale): string {
  if (reason.kind === 'error') return text(locale, 'transcript.failedWith', { message: reason.error.message })
  if (reason.kind === 'aborted') return text(locale, 'transcript.abortedBy', { cause: reason.cause.kind })
  return outcomeText(reason.kind, locale)
}

/** Columns `text` takes in a terminal: East Asian wide characters take two. */
function displayWidth(value: string): number {
  let width = 0
  for (const char of value) width += /[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]/.test(char) ? 2 : 1
  return width
}

function formatMs(ms: number): string {
  return `${ms < 10 ? ms.toFixed(1) : Math.round(ms)} ms`
}

function shorten(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim()
  return line.length > max ? `${line.slice(0, max - 1)}…` : line
}

/** Splits text into lines of at most `width` characters, breaking at spaces; keeps each line's indent. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = []
  for (const paragraph of text.split('\n')) {
    const indent = /^ */.exec(paragraph)![0]
    let line = indent
    for (const word of paragraph.slice(indent.length).split(' ')) {
      if (line.trim() && line.length + 1 + word.length > width) {
        lines.push(line)
        line = indent + word
      } else {
        line = line.trim() ? `${line} ${word}` : indent + word
      }
    }
    lines.push(line)
  }
  return lines
}

/** A `subagent` call in words, with its whole prompt; any other call on one line. */
function toolCallText(block: Extract<ContentBlock, { type: 'tool-call' }>, width: number, locale: Locale): string {
  let args: Record<string, unknown> = {}
  try {
    args = JSON.parse(block.arguments) as Record<string, unknown>
  } catch {
    return shorten(`→ ${block.name} ${block.arguments}`, width)
  }
  if (block.name === 'subagent' && typeof args.prompt === 'string') {
    const how = [String(args.mode ?? 'spawn'), ...(args.label ? [JSON.stringify(args.label)] : [])]
    if (typeof args.agent === 'string') how.push(text(locale, 'transcript.withAgent', { agent: args.agent }))
    if (args.output_schema) how.push(text(locale, 'transcript.withOutputSchema'))
    if (args.background === true) how.push(text(locale, 'transcript.inBackground'))
    return `→ subagent (${how.join(', ')}): ${args.prompt}`
  }
  return shorten(`→ ${block.name} ${JSON.stringify(args)}`, width)
}

export interface TranscriptOptions {
  width: number
  maxLines: number
  /** Language of the labels and status words (default `en-US`); the conversation is shown as it is. */
  locale?: Locale
  /** `verbose` adds a line per `subagent/start`, `subagent/end` and turn start (default `normal`). */
  verbosity?: Verbosity
}

/** What a printer takes beyond the plugin's config. */
export interface PrinterOptions extends TranscriptOptions {
  /** Quiet time after which a child's partial line is written while others stream (default 400 ms). */
  pauseMs?: number
}

/**
 * Turns events into indented lines; `write` receives text as it is ready (whole lines, or the
 * pieces of a streamed line), each line ended by `\n`.
 */
export class TranscriptPrinter {
  readonly #sessions = new Map<string, SessionView>()
  readonly #runs = new Map<string, RunView>()
  readonly #locale: Locale
  /** The session whose streamed line is open (written without its `\n` yet). */
  #open: SessionView | undefined
  readonly #write: (text: string) => void

  /** `write` receives only printable text: a control character of a model or tool is shown, never sent. */
  constructor(
    write: (text: string) => void,
    private readonly options: PrinterOptions,
  ) {
    this.#locale = options.locale ?? 'en-US'
    this.#write = write
  }

  /** Model text and tool output are untrusted: none of their control sequences reaches the terminal. */
  private out(text: string): void {
    this.#write(printable(text))
  }

  /** Writes one whole line, ending a streamed line left open by another agent first. */
  private write(line: string): void {
    this.#closeOpenLine()
    this.out(`${line}\n`)
  }

  #closeOpenLine(): void {
    if (!this.#open) return
    this.out('\n')
    this.#open.stream?.resume()
    this.#open = undefined
  }

  /** Verbose only: one line for a hook or lifecycle step. */
  #trace(depth: number, text: string): void {
    if (this.options.verbosity === 'verbose') this.#line(depth, 'hook', text)
  }

  #text(key: string, params?: Record<string, string | number>): string {
    return text(this.#locale, `transcript.${key}`, params)
  }

  event(session: Session, event: SessionEvent): void {
    let view = this.#sessions.get(session.id)
    if (!view) {
      const depth = session.header.delegationDepth ?? 0
      view = { depth, turnUsage: { inputTokens: 0, outputTokens: 0 } }
      this.#sessions.set(session.id, view)
      if (session.header.origin === 'subagent') view.pending = []
    }
    // a child's first events come before `subagent/start` names it
    if (view.pending) view.pending.push(event)
    else this.#print(view, event)
  }

  start(info: SubagentInfo, session: Session | undefined): void {
    this.#runs.set(info.runId, { startedAt: performance.now(), label: info.label })
    const details = [info.label ? this.#text('childLabelled', { label: info.label }) : this.#text('child'), info.mode]
    const seedLength = session?.header.seedLength
    if (seedLength) details.push(this.#text('seeded', { count: seedLength }))
    details.push(this.#text('depth', { depth: info.depth }), this.#text('agent', { id: info.childId.slice(0, 8) }))
    this.#frame(info.depth, '┌─', details.join(' · '))
    this.#trace(info.depth, `subagent/start run ${info.runId.slice(0, 8)} · parent ${info.parentId.slice(0, 8)} · root ${info.rootId.slice(0, 8)}`)
    let view = this.#sessions.get(info.childId)
    if (!view) this.#sessions.set(info.childId, (view = { depth: info.depth, turnUsage: { inputTokens: 0, outputTokens: 0 } }))
    view.label = info.label
    const pending = view.pending ?? []
    view.pending = undefined
    for (const event of pending) this.#print(view, event)
  }

  settled(runId: string, result: SubagentResult): void {
    const run = this.#runs.get(runId)
    if (run) run.result = result
  }

  end(info: SubagentInfo): void {
    const run = this.#runs.get(info.runId)
    this.#runs.delete(info.runId)
    const view = this.#sessions.get(info.childId)
    if (view) view.pending = undefined
    this.#sessions.delete(info.childId)
    if (view?.stream) this.#endStream(view, false)
    this.#trace(info.depth, `subagent/end run ${info.runId.slice(0, 8)} · ${info.stopReason ?? 'ended'}`)
    const result = run?.result
    if (result?.structured !== undefined) this.#block(info.depth, 'structured', JSON.stringify(result.structured, null, 2))
    const parts = [outcomeText(info.stopReason ?? 'ended', this.#locale)]
    const diagnostic = result && diagnosticIn(result, this.#locale)
    if (diagnostic) parts[0] += `: ${diagnostic}`
    const usage = formatUsage(info.usage, this.#locale)
    if (usage) parts.push(usage)
    if (run) parts.push(formatMs(performance.now() - run.startedAt))
    this.#frame(info.depth, '└─', `${info.label ? `"${info.label}" ` : ''}${parts.join(' · ')}`)
  }

  #print(view: SessionView, event: SessionEvent): void {
    if (!isKnownEvent(event)) return
    const { depth } = view
    switch (event.type) {
      case 'turn/start': {
        view.turnStartedAt = performance.now()
        view.turnUsage = { inputTokens: 0, outputTokens: 0 }
        const { data } = event
        this.#trace(depth, this.#tagged(view, `turn/start ${data.turn} (${data.trigger})`))
        return
      }
      case 'assistant/delta': {
        const { data } = event
        this.#stream(view, data.text)
        return
      }
      case 'user/message': {
        const { data } = event
        const label = depth > 0 ? 'task' : data.source.kind === 'plugin' ? 'plugin' : 'user'
        // a child's task line always follows its own frame line: no tag needed
        this.#block(depth, label, textOf(data.content).trim())
        return
      }
      case 'assistant/message': {
        const { data } = event
        if (data.usage) {
          view.turnUsage.inputTokens += data.usage.inputTokens
          view.turnUsage.outputTokens += data.usage.outputTokens
        }
        const text = textOf(data.content).trim()
        // streamed: its text is on screen already
        if (view.stream?.started) this.#endStream(view, !!data.interrupted)
        else if (text) this.#block(depth, 'assistant', this.#tagged(view, data.interrupted ? `${text} ${this.#text('interrupted')}` : text))
        view.stream = undefined
        for (const block of data.content) {
          if (block.type === 'tool-call') {
            this.#block(depth, 'assistant', this.#tagged(view, toolCallText(block, this.#textWidth(depth), this.#locale)))
          }
        }
        return
      }
      case 'tool/result': {
        const { data } = event
        const mark = data.isError ? '✗' : '✓'
        this.#line(depth, 'tool', shorten(this.#tagged(view, `${data.name} ${mark} ${textOf(data.content).trim()}`), this.#textWidth(depth)))
        return
      }
      case 'turn/end': {
        // a child's outcome is printed once, by `subagent/end`
        if (depth > 0) return
        const { data } = event
        const parts = [this.#text('turn', { turn: data.turn, outcome: reasonText(data.reason, this.#locale) })]
        const usage = formatUsage(view.turnUsage, this.#locale)
        if (usage) parts.push(usage)
        if (view.turnStartedAt !== undefined) parts.push(formatMs(performance.now() - view.turnStartedAt))
        this.#line(depth, '', parts.join(' · '))
        this.write('')
        return
      }
    }
  }

  /** Writes a delta's text as it comes, laid out as a whole message would be. */
  #stream(view: SessionView, delta: string): void {
    if (!view.stream) {
      if (view.depth > 0) {
        // a child's lines are written whole: beside other children (and its parent's lines) a
        // line per streamed chunk would be unreadable; every line carries the tag while others run
        const aligned = this.#alignedTag(view) ?? ''
        view.stream = new StreamedLines(Math.max(10, this.#textWidth(view.depth) - aligned.length), this.options.maxLines)
        const continuation = this.#lineStart(view.depth, '') + aligned
        view.shared = new SharedLine((line) => this.write(line), continuation, this.options.pauseMs)
        view.sharedTag = aligned
        for (const piece of view.stream.push(delta)) this.#streamPiece(view, piece)
        return
      }
      view.stream = new StreamedLines(this.#textWidth(view.depth), this.options.maxLines)
      // the tag leads the text, wrapped with it, as on a whole message
      const tag = this.#tagged(view, '')
      if (tag) for (const piece of view.stream.push(tag)) this.#streamPiece(view, piece)
    }
    for (const piece of view.stream.push(delta)) this.#streamPiece(view, piece)
  }

  #streamPiece(view: SessionView, piece: StreamedPiece): void {
    const shared = view.shared
    if (shared) {
      if (piece.kind === 'line') shared.start(this.#lineStart(view.depth, piece.index === 0 ? 'assistant' : '') + view.sharedTag)
      else shared.add(piece.text)
      return
    }
    if (piece.kind === 'line') {
      this.#closeOpenLine()
      this.out(this.#lineStart(view.depth, piece.index === 0 ? 'assistant' : ''))
      this.#open = view
    } else {
      if (this.#open !== view) {
        // another agent wrote in between: go on on a line of our own
        this.#closeOpenLine()
        this.out(this.#lineStart(view.depth, '') + this.#tagged(view, ''))
        this.#open = view
      }
      this.out(piece.text)
    }
  }

  /** Ends a streamed message: its held last line or how many lines were cut, and its line break. */
  #endStream(view: SessionView, interrupted: boolean): void {
    const stream = view.stream
    view.stream = undefined
    if (!stream) return
    const { pieces, hidden } = stream.end()
    for (const piece of pieces) this.#streamPiece(view, piece)
    if (interrupted) this.#streamPiece(view, { kind: 'text', text: ` ${this.#text('interrupted')}` })
    view.shared?.flush()
    view.shared = undefined
    if (this.#open === view) this.#closeOpenLine()
    if (hidden) this.#line(view.depth, '', this.#text('moreLines', { count: hidden }))
  }

  /**
   * A child's text, prefixed with `[label]` while several runs are live: their lines interleave
   * (concurrent and background children), and the prefix tells them apart.
   */
  #tagged(view: SessionView, text: string): string {
    return view.depth > 0 && view.label && this.#runs.size > 1 ? `[${view.label}] ${text}` : text
  }

  /**
   * The `[label]` tag of a child streaming while other runs are live, padded to the longest label
   * of the live runs so the text of every child starts in one column; `undefined` otherwise.
   */
  #alignedTag(view: SessionView): string | undefined {
    if (!(view.depth > 0 && view.label && this.#runs.size > 1)) return undefined
    let longest = view.label.length
    for (const run of this.#runs.values()) if (run.label && run.label.length > longest) longest = run.label.length
    return `[${view.label}]`.padEnd(longest + 3)
  }

  /** Room left for text after the indent and the label column. */
  #textWidth(depth: number): number {
    return Math.max(30, this.options.width - this.#indent(depth).length - LABEL_WIDTH)
  }

  #indent(depth: number): string {
    return '  │ '.repeat(depth)
  }

  #frame(depth: number, corner: string, text: string): void {
    this.write(`${this.#indent(depth - 1)}  ${corner} ${text}`)
  }

  #line(depth: number, label: Label, text: string): void {
    this.write(`${this.#lineStart(depth, label)}${text}`)
  }

  /** The indent and the label column of a line. */
  #lineStart(depth: number, label: Label): string {
    const name = label ? this.#text(`label.${label}`) : ''
    const pad = ' '.repeat(Math.max(1, LABEL_WIDTH - displayWidth(name)))
    return `${this.#indent(depth)}${name ? name + pad : ' '.repeat(LABEL_WIDTH)}`
  }

  /** A labelled, wrapped, possibly multi-line text; at most `maxLines` lines. */
  #block(depth: number, label: Label, text: string): void {
    const lines = wrap(text, this.#textWidth(depth))
    const shown = lines.length > this.options.maxLines ? lines.slice(0, this.options.maxLines - 1) : lines
    for (const [index, line] of shown.entries()) this.#line(depth, index === 0 ? label : '', line)
    if (shown.length < lines.length) this.#line(depth, '', this.#text('moreLines', { count: lines.length - shown.length }))
  }
}
