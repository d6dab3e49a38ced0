/**
 * `ScriptedModel`: the embedded default model and the test double (SPEC §1.7). Deterministic, no
 * timers unless an entry asks for a `delayMs`: each model call takes the next scripted entry.
 */
import { type Context, Service } from 'cordis'
import Schema from 'schemastery'
import { newCallId } from '../../lib/call-id.ts'
import { localizeConfig } from '../../locales/index.ts'
import type { FinishReason, ModelAdapter, ModelRequest, StreamPart, Usage } from '../../lib/types.ts'
import { SubagentError } from '../../lib/errors.ts'

declare module 'cordis' {
  interface Context {
    scripted: ScriptedModel
  }
}

export interface ScriptedToolCall {
  id?: string
  name: string
  /** JSON text, or a value that is serialized for you. */
  arguments: unknown
}

export interface ScriptedResponse {
  text?: string
  /** Streamed after `text`, one text delta per element (empty strings skipped): a long stream. */
  deltas?: readonly string[]
  toolCalls?: ScriptedToolCall[]
  finish?: 'stop' | 'max-tokens'
  usage?: Usage
  /**
   * Waits this long (a timer, ended early by the request signal) before streaming: for demos of
   * overlapping runs. Tests leave it unset and stay timer-free.
   */
  delayMs?: number
}

/** One scripted answer: a response, a function of the request, `'hang'`, or an `Error` to throw. */
export type ScriptEntry = ScriptedResponse | 'hang' | Error | ((request: ModelRequest) => ScriptedResponse | 'hang' | Error)

/** The message an exhausted script throws. */
export const exhaustedMessage = 'scripted model has no more responses'

function waitForAbort(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) return reject(signal.reason)
    signal.addEventListener('abort', () => reject(signal.reason), { once: true })
  })
}

/** Resolves after `ms`, or rejects with the signal's reason once it aborts. */
function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal.reason)
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal.addEventListener('abort', onAbort, { once: true })
  })
}

function toArguments(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value ?? {})
}

/** A model that answers from a script. Provider name `scripted` (configurable). */
export class ScriptedModel extends Service {
  // cordis calls service methods through a tracing proxy, where #private fields cannot be read
  private readonly queue: ScriptEntry[] = []
  private fallback?: ScriptEntry
  /** Every request received, in order (unless `record` is off). */
  readonly requests: ModelRequest[] = []

  constructor(ctx: Context, private readonly config: ScriptedModel.Config) {
    super(ctx, 'scripted')
    const taker = this.taker
    const adapter: ModelAdapter = { stream: (request) => new ScriptedStream(taker, request) }
    ctx.models.register(config.provider, adapter)
  }

  /** Appends entries to the script. */
  push(...entries: ScriptEntry[]): this {
    this.queue.push(...entries)
    return this
  }

  /** Answers every call with `entry` once the script is used up (for demos and benchmarks). */
  repeat(entry: ScriptEntry | undefined): this {
    this.fallback = entry
    return this
  }

  /** Entries not yet used. */
  get pending(): number {
    return this.queue.length
  }

  /** Drops the rest of the script, the repeat entry and the recorded requests. */
  reset(): void {
    this.queue.length = 0
    this.requests.length = 0
    this.fallback = undefined
  }

  /** `take`, bound once: every stream of this model shares it. */
  private readonly taker = (request: ModelRequest): ScriptedResponse | 'hang' => this.take(request)

  /** Takes the next entry for `request` (recording it first): what one model call answers. */
  private take(request: ModelRequest): ScriptedResponse | 'hang' {
    if (this.config.record) this.requests.push(request)
    let entry = this.queue.length ? this.queue.shift() : this.fallback
    if (entry === undefined) throw new SubagentError('SCRIPT_EXHAUSTED', exhaustedMessage)
    if (typeof entry === 'function') entry = entry(request)
    if (entry instanceof Error) throw entry
    return entry
  }
}

/**
 * The parts of a response that needs no waiting, in stream order, each made when it is reached:
 * a long `deltas` list is read by index, as a real adapter yields parts as they come, instead of
 * being turned into a list of parts that lives as long as the stream.
 */
class ResponseParts {
  private declare readonly entry: ScriptedResponse
  // what comes next: 0 `text`, 1 `deltas` (from `index`), 2 `toolCalls` (from `index`), 3 the finish, 4 nothing
  private declare stage: number
  private declare index: number

  constructor(entry: ScriptedResponse) {
    this.entry = entry
    this.stage = 0
    this.index = 0
  }

  /** The next part, or `undefined` once the finish was handed out. */
  next(): StreamPart | undefined {
    const { entry } = this
    if (this.stage === 0) {
      this.stage = 1
      const text = entry.text
      if (text) return { type: 'text-delta', text }
    }
    if (this.stage === 1) {
      const deltas = entry.deltas
      if (deltas) {
        while (this.index < deltas.length) {
          const text = deltas[this.index++]
          if (text) return { type: 'text-delta', text }
        }
      }
      this.stage = 2
      this.index = 0
    }
    const calls = entry.toolCalls
    if (this.stage === 2) {
      if (calls && this.index < calls.length) {
        const call = calls[this.index++]!
        return { type: 'tool-call', id: call.id ?? newCallId(), name: call.name, arguments: toArguments(call.arguments) }
      }
      this.stage = 3
    }
    if (this.stage === 3) {
      this.stage = 4
      const reason: FinishReason = entry.finish ?? (calls?.length ? 'tool-calls' : 'stop')
      return entry.usage ? { type: 'finish', reason, usage: entry.usage } : { type: 'finish', reason }
    }
    return undefined
  }
}

/** A `'hang'` entry, or one with a `delayMs`: the only answers that wait. */
async function* waitingParts(entry: ScriptedResponse | 'hang', signal: AbortSignal): AsyncGenerator<StreamPart> {
  if (entry === 'hang') {
    yield { type: 'text-delta', text: 'partial' }
    await waitForAbort(signal)
    return
  }
  if (entry.delayMs) await delay(entry.delayMs, signal)
  const parts = new ResponseParts(entry)
  for (let part = parts.next(); part; part = parts.next()) yield part
}

/**
 * One model call's stream. Like an async generator, it takes its entry on the first `next()`
 * (a throw there rejects that `next()`), but a response that needs no waiting is handed out
 * part by part, one resolved promise each: an async generator costs a suspension and two
 * promises per part (≈ 1.1 KB a scripted turn).
 */
class ScriptedStream implements AsyncIterableIterator<StreamPart> {
  // `declare`d fields, assigned in the constructor: see docs/performance.md, "Declared fields"
  private declare readonly take: (request: ModelRequest) => ScriptedResponse | 'hang'
  private declare readonly request: ModelRequest
  /** `null` once the stream is over (or its entry could not be taken). */
  private declare parts: ResponseParts | null | undefined
  private declare waiting: AsyncGenerator<StreamPart> | undefined

  constructor(take: (request: ModelRequest) => ScriptedResponse | 'hang', request: ModelRequest) {
    this.take = take
    this.request = request
    this.parts = undefined
    this.waiting = undefined
  }

  [Symbol.asyncIterator](): this {
    return this
  }

  next(): Promise<IteratorResult<StreamPart>> {
    if (this.waiting) return this.waiting.next()
    if (this.parts === undefined) {
      try {
        const entry = this.take(this.request)
        if (entry === 'hang' || entry.delayMs) {
          this.waiting = waitingParts(entry, this.request.signal)
          return this.waiting.next()
        }
        this.parts = new ResponseParts(entry)
      } catch (error) {
        this.parts = null
        return Promise.reject(error)
      }
    }
    let part: StreamPart | undefined
    try {
      part = this.parts?.next()
    } catch (error) {
      // a tool call's arguments that JSON cannot hold: a rejected `next()`, as an async iterator's
      this.parts = null
      return Promise.reject(error)
    }
    if (part) return Promise.resolve({ value: part, done: false })
    this.parts = null
    return Promise.resolve({ value: undefined, done: true })
  }

  return(): Promise<IteratorResult<StreamPart>> {
    if (this.waiting) return this.waiting.return(undefined)
    this.parts = null
    return Promise.resolve({ value: undefined, done: true })
  }
}

export namespace ScriptedModel {
  export const inject = ['models']
  export interface Config {
    provider: string
    record: boolean
  }
  // field descriptions: `config.scriptedModel` in locales/*.yml
  export const Config: Schema<Config> = localizeConfig(
    Schema.object({ provider: Schema.string().default('scripted'), record: Schema.boolean().default(true) }),
    'scriptedModel',
  )
}

export default ScriptedModel
