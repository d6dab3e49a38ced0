/**
 * A `ModelAdapter` (SPEC §1.7) for any OpenAI-compatible chat-completions endpoint, built on the
 * official `openai` client: streamed text, tool calls assembled across chunks, usage.
 */
import { randomUUID } from 'node:crypto'
import OpenAI, { type ClientOptions } from 'openai'
import type { ChatCompletionChunk } from 'openai/resources/chat/completions'
import type { FinishReason, ModelAdapter, ModelRequest, StreamPart, Usage } from '../../lib/types.ts'
import { kindOf } from '../../lib/content.ts'
import { urlSecrets } from '../../lib/text/redact.ts'
import { isTimerDelay, MAX_TIMER_DELAY_MS } from '../../lib/async/timer-delay.ts'
import { type AdapterLogger, redactingLogger } from './client-logger.ts'
import { toModelRequestError } from './client-errors.ts'
import { abortError, ContentFilterError, malformedChunkError, missingModelError, noChunksError, timeoutError } from './errors.ts'
import { buildChatRequest, defaultTimeoutMs } from './request.ts'

export interface OpenAIAdapterOptions {
  /** Endpoint root, e.g. `https://api.openai.com/v1`; `/chat/completions` is appended. */
  baseURL: string
  /**
   * Sent as `Authorization: Bearer <key>`; never appears in an error message or a log line.
   * Empty or absent: no `Authorization` header at all (keyless local servers).
   */
  apiKey?: string
  /** Used when a request names no model. */
  model?: string
  /** Longest wait for the response headers, and for each later chunk of the stream. */
  timeoutMs?: number
  /** Replaces the global `fetch` (tests, proxies). */
  fetch?: ClientOptions['fetch']
  /**
   * Receives the client's log lines, secrets redacted (default `console`). The `OpenAIModel`
   * plugin passes its cordis logger.
   */
  logger?: AdapterLogger
}

interface PendingToolCall {
  id: string
  name: string
  arguments: string
}

/**
 * Creates the adapter. Each `stream` call sends one streaming request (no retries) and yields
 * text deltas as they arrive, then the tool calls (once the finish reason or the end of the
 * stream is seen), then one `finish` part. It throws a `ModelRequestError` on HTTP, connection
 * and timeout failures, and the signal's reason (or an `AbortError`) once the request is aborted.
 * Throws `RangeError` for a `timeoutMs` that is not a positive number of at most 2147483647.
 */
export function createOpenAIAdapter(options: OpenAIAdapterOptions): ModelAdapter {
  const timeoutMs = options.timeoutMs ?? defaultTimeoutMs
  // a longer timer would fire after 1 ms: every request would time out at once
  if (!isTimerDelay(timeoutMs)) {
    throw new RangeError(`openai adapter timeoutMs must be a positive number of at most ${MAX_TIMER_DELAY_MS}`)
  }
  // the key, and credentials in the URL (which fetch refuses, naming the whole URL)
  const secrets = [...(options.apiKey ? [options.apiKey] : []), ...urlSecrets(options.baseURL)]
  const client = new OpenAI({
    baseURL: options.baseURL,
    // the client insists on a key string; without a key the header that would carry it is removed
    apiKey: options.apiKey || 'unused',
    ...(options.apiKey ? {} : { defaultHeaders: { Authorization: null } }),
    timeout: timeoutMs,
    maxRetries: 0,
    fetch: options.fetch,
    // the client would read these from OPENAI_ORG_ID / OPENAI_PROJECT_ID and send them to any baseURL
    organization: null,
    project: null,
    logger: redactingLogger(options.logger ?? console, secrets),
  })
  const settings = { client, secrets, model: options.model ?? '', timeoutMs }
  return { stream: (request) => streamChat(settings, request) }
}

async function* streamChat(
  settings: { client: OpenAI; secrets: readonly string[]; model: string; timeoutMs: number },
  request: ModelRequest,
): AsyncGenerator<StreamPart, void, undefined> {
  const { signal } = request
  if (signal.aborted) throw abortError(signal)
  const model = request.model || settings.model
  if (!model) throw missingModelError()

  // one controller carries both the caller's abort and our idle timeout to the client
  const controller = new AbortController()
  const forwardAbort = () => controller.abort(signal.reason)
  signal.addEventListener('abort', forwardAbort, { once: true })
  let timedOut = false
  let timer: NodeJS.Timeout | undefined
  const arm = () => {
    timer = setTimeout(() => {
      timedOut = true
      controller.abort()
    }, settings.timeoutMs)
  }
  const disarm = () => clearTimeout(timer)
  const fail = (error: unknown): Error => {
    if (signal.aborted) return abortError(signal)
    if (timedOut) return timeoutError(settings.timeoutMs)
    return toModelRequestError(error, settings.secrets, settings.timeoutMs)
  }

  const pending = new Map<number, PendingToolCall>()
  let emittedCalls = 0
  let reported: ChatCompletionChunk.Choice['finish_reason'] = null
  let usage: Usage | undefined

  // ids already given to a call of this response: a server may send one twice, or none
  const usedIds = new Set<string>()

  function* flushToolCalls(): Generator<StreamPart, void, undefined> {
    const indexes = [...pending.keys()].sort((a, b) => a - b)
    for (const index of indexes) {
      const call = pending.get(index)!
      emittedCalls++
      // a missing id, or one an earlier call of this response has, becomes a fresh one: the
      // session records it, and the history sent back pairs each result with its call by it
      const id = call.id && !usedIds.has(call.id) ? call.id : `call_${randomUUID()}`
      usedIds.add(id)
      yield {
        type: 'tool-call',
        id,
        name: call.name,
        // a no-argument call often arrives with no argument text at all
        arguments: call.arguments || '{}',
      }
    }
    pending.clear()
  }

  try {
    arm()
    const { data: stream, response } = await settings.client.chat.completions
      .create(buildChatRequest(request, model), { signal: controller.signal })
      .withResponse()
    disarm()
    const chunks = stream[Symbol.asyncIterator]()
    let chunkCount = 0
    for (;;) {
      arm()
      const next = await chunks.next()
      disarm()
      if (next.done) break
      chunkCount++
      const chunk = next.value
      const problem = chunkProblem(chunk)
      if (problem) throw malformedChunkError(chunkCount, problem)
      if (chunk.usage) usage = usageOf(chunk.usage) ?? usage
      const choice = chunk.choices?.find((candidate) => candidate.index === 0) ?? chunk.choices?.[0]
      if (!choice) continue
      const delta = choice.delta
      if (typeof delta?.content === 'string' && delta.content) yield { type: 'text-delta', text: delta.content }
      delta?.tool_calls?.forEach((piece, position) => {
        const index = typeof piece.index === 'number' ? piece.index : position
        let call = pending.get(index)
        if (!call) pending.set(index, (call = { id: '', name: '', arguments: '' }))
        // read as JSON gives them: a field of another type than the protocol's is left out (a
        // number id or name passed on failed the turn; an object became "[object Object]")
        const id: unknown = piece.id
        if (typeof id === 'string' && id && !call.id) call.id = id
        const name: unknown = piece.function?.name
        // a name may arrive in pieces (`get_`, `weather`); some servers repeat the whole name instead
        if (typeof name === 'string' && name && name !== call.name) call.name += name
        call.arguments += argumentText(piece.function?.arguments)
      })
      if (choice.finish_reason) {
        // a filtered answer is cut off, not complete: it must not pass for one
        if (choice.finish_reason === 'content_filter') throw new ContentFilterError()
        reported = choice.finish_reason
        yield* flushToolCalls()
      }
    }
    // the client ends an aborted stream quietly, so an early end must be checked here
    if (signal.aborted || timedOut) throw fail(undefined)
    // a 200 that is no stream (a JSON error, a proxy's page, a server ignoring `stream`) parses as
    // an empty one: finishing it would pass a failed request off as an empty answer
    if (chunkCount === 0) throw noChunksError(response.headers.get('content-type'))
    yield* flushToolCalls()
    const reason = finishReason(reported, emittedCalls)
    yield usage ? { type: 'finish', reason, usage } : { type: 'finish', reason }
  } catch (error) {
    throw fail(error)
  } finally {
    disarm()
    signal.removeEventListener('abort', forwardAbort)
    // closes the connection when the consumer stops early or the request failed
    controller.abort()
  }
}

/**
 * Why a parsed chunk cannot be read as the protocol's (a phrase after "stream chunk <n>"), or
 * `undefined`: the reads below take `choices` and a choice's `tool_calls` as arrays, and each
 * tool call as an object.
 */
function chunkProblem(chunk: unknown): string | undefined {
  if (typeof chunk !== 'object' || chunk === null || Array.isArray(chunk)) return `is ${kindOf(chunk)}, not an object`
  const choices: unknown = (chunk as { choices?: unknown }).choices
  if (choices === undefined || choices === null) return undefined
  if (!Array.isArray(choices)) return `choices is ${kindOf(choices)}, not an array`
  for (const choice of choices as unknown[]) {
    if (typeof choice !== 'object' || choice === null) return `choice is ${kindOf(choice)}, not an object`
    const delta: unknown = (choice as { delta?: unknown }).delta
    const toolCalls: unknown = typeof delta === 'object' && delta !== null ? (delta as { tool_calls?: unknown }).tool_calls : undefined
    if (toolCalls === undefined || toolCalls === null) continue
    if (!Array.isArray(toolCalls)) return `delta tool_calls is ${kindOf(toolCalls)}, not an array`
    // each is read as an object (`piece.index`): a null one failed with the read's bare TypeError
    for (const piece of toolCalls as unknown[]) {
      if (typeof piece !== 'object' || piece === null || Array.isArray(piece)) return `delta tool_call is ${kindOf(piece)}, not an object`
    }
  }
  return undefined
}

/**
 * A piece of a tool call's argument text: a string as it is; the whole arguments as a JSON object,
 * which some OpenAI-compatible servers stream instead of its text, as that text; else `''`.
 */
function argumentText(piece: unknown): string {
  if (typeof piece === 'string') return piece
  return typeof piece === 'object' && piece !== null ? JSON.stringify(piece) : ''
}

/** A count as the host accepts it (a non-negative finite number), else `undefined`. */
function tokenCount(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined
}

/**
 * The usage a chunk reports. Servers and proxies leave a count out or send `null`: the host
 * would fail the whole turn on such a usage, losing a complete answer, so a count that cannot be
 * read is 0, and a usage with neither count readable is no usage (`undefined`).
 */
function usageOf(reported: { prompt_tokens?: unknown; completion_tokens?: unknown }): Usage | undefined {
  const inputTokens = tokenCount(reported.prompt_tokens)
  const outputTokens = tokenCount(reported.completion_tokens)
  if (inputTokens === undefined && outputTokens === undefined) return undefined
  return { inputTokens: inputTokens ?? 0, outputTokens: outputTokens ?? 0 }
}

/** `length` → `max-tokens`; `tool_calls` → `tool-calls`; otherwise `tool-calls` if calls were streamed, else `stop`. */
function finishReason(reported: ChatCompletionChunk.Choice['finish_reason'], emittedCalls: number): FinishReason {
  if (reported === 'length') return 'max-tokens'
  if (reported === 'tool_calls' || reported === 'function_call') return 'tool-calls'
  return emittedCalls > 0 ? 'tool-calls' : 'stop'
}
