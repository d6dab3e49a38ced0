/**
 * One step's stream parts as the loop reads them (SPEC §1.7): each part is checked as it arrives,
 * each field read once, against the union of stream parts, and what was checked is what the step's
 * events and message are built from (they are appended without another walk): session events are
 * JSON with the documented field types, so nothing an adapter yields may carry other values into
 * them.
 */
import { SubagentError } from '../../../lib/errors.ts'
import { plainDeltasPerStep, StreamedStep } from '../../../lib/session/streamed-steps.ts'
import { TextPieces } from '../../../lib/session/text-pieces.ts'
import type { ToolCallBlock, Usage } from '../../../lib/types.ts'
import type { SessionLog } from '../sessions/session-store.ts'
import type { ResultReader } from './turn-state.ts'

function malformed(provider: string, problem: string): SubagentError {
  return new SubagentError('MODEL_FAILED', `model adapter for provider "${provider}" yielded a malformed part: ${problem}`)
}

function nameOf(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : value === null ? 'null' : typeof value
}

function isTokenCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0
}

/** A `tool-call` part's call, each field read once; throws `MODEL_FAILED` naming the first bad one. */
function readToolCall(part: Record<string, unknown>, provider: string): ToolCallBlock {
  const id = part.id
  if (typeof id !== 'string') throw malformed(provider, `tool-call id must be a string, got ${nameOf(id)}`)
  const name = part.name
  if (typeof name !== 'string') throw malformed(provider, `tool-call name must be a string, got ${nameOf(name)}`)
  const args = part.arguments
  if (typeof args !== 'string') throw malformed(provider, `tool-call arguments must be a string, got ${nameOf(args)}`)
  return { type: 'tool-call', id, name, arguments: args }
}

/** A `finish` part's usage as a fresh `Usage` (each count read once), or `undefined` without one. */
function readUsage(usage: unknown, provider: string): Usage | undefined {
  if (usage === undefined) return undefined
  const problem = 'finish usage must have non-negative finite inputTokens and outputTokens'
  if (typeof usage !== 'object' || usage === null) throw malformed(provider, problem)
  const inputTokens = (usage as Partial<Usage>).inputTokens
  if (!isTokenCount(inputTokens)) throw malformed(provider, problem)
  const outputTokens = (usage as Partial<Usage>).outputTokens
  if (!isTokenCount(outputTokens)) throw malformed(provider, problem)
  return { inputTokens, outputTokens }
}

/**
 * What one step's stream brought so far: its text, tool calls, finish reason and usage. Each text
 * delta is appended to the session as it is read (`assistant/delta`).
 */
export class StepParts implements ResultReader {
  // `declare`d fields, assigned in the constructor: see docs/performance.md, "Declared fields"
  private declare readonly provider: string
  private declare readonly session: SessionLog
  private declare readonly turn: number
  private declare readonly step: number
  // the first delta's text as it is; from the second on, every piece, joined once at the end:
  // `+=` over a long stream would leave the message's text a chain of that many string pieces
  // (32 B each), held as long as the session is. In chunks: one list of a long stream's pieces
  // would be a large object (`lib/session/text-pieces.ts`)
  private declare text: string
  private declare pieces: TextPieces | undefined
  // the step's compact deltas, past its first `plainDeltasPerStep`; `null` once an event of
  // someone else's came between two deltas (the rest of the step stays plain)
  private declare stream: StreamedStep | null | undefined
  /** The tool calls in stream order; made on the first one: a step without any needs no list. */
  declare calls: ToolCallBlock[] | undefined
  declare finish: 'stop' | 'tool-calls' | 'max-tokens'
  declare usage: Usage | undefined

  constructor(provider: string, session: SessionLog, turn: number, step: number) {
    this.provider = provider
    this.session = session
    this.turn = turn
    this.step = step
    this.text = ''
    this.pieces = undefined
    this.stream = undefined
    this.calls = undefined
    this.finish = 'stop'
    this.usage = undefined
  }

  /**
   * Takes one result of the stream's iterator: true once it is done. Throws `MODEL_FAILED` naming
   * what is wrong for a result that is not an object, or a part outside SPEC §1.7's union.
   */
  take(result: unknown): boolean {
    const { provider } = this
    if (typeof result !== 'object' || result === null) throw malformed(provider, 'its iterator returned a non-object')
    const next = result as IteratorResult<unknown>
    if (next.done) return true
    const part: unknown = next.value
    if (typeof part !== 'object' || part === null) throw malformed(provider, `expected an object, got ${nameOf(part)}`)
    const fields = part as Record<string, unknown>
    const type = fields.type
    if (type === 'text-delta') {
      const delta = fields.text
      if (typeof delta !== 'string') throw malformed(provider, `text-delta text must be a string, got ${nameOf(delta)}`)
      if (delta) this.addText(delta)
    } else if (type === 'tool-call') {
      const call = readToolCall(fields, provider)
      // the first as a literal of one: an empty array's first push reserves room for 17
      if (this.calls) this.calls.push(call)
      else this.calls = [call]
    } else if (type === 'finish') {
      const { reason, usage } = fields
      if (reason !== 'stop' && reason !== 'tool-calls' && reason !== 'max-tokens') {
        throw malformed(provider, `finish reason must be "stop", "tool-calls" or "max-tokens", got ${nameOf(reason)}`)
      }
      this.finish = reason
      this.usage = readUsage(usage, provider)
    } else throw malformed(provider, `unknown part type ${nameOf(type)}`)
    return false
  }

  /** The step's text so far, the pieces joined. */
  streamed(): string {
    return this.pieces ? this.pieces.join() : this.text
  }

  /** The step's message holds `text` (`streamed()`): the compact deltas read it from now on. */
  settle(text: string): void {
    this.stream?.settle(text)
  }

  private addText(delta: string): void {
    const { session, pieces } = this
    if (pieces) pieces.push(delta)
    else if (this.text) this.pieces = new TextPieces(this.text, delta)
    else this.text = delta
    const list = this.pieces
    if (list && list.length > plainDeltasPerStep && this.stream !== null) {
      this.stream ??= new StreamedStep(this.turn, this.step, list, list.length - 1, session.events.length)
      if (session.appendStreamed(this.stream)) return
      this.stream = null
    }
    session.appendDelta(this.turn, this.step, delta)
  }
}
