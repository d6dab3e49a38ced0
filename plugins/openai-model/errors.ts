/**
 * Failures of an OpenAI-compatible model request. Every message starts with
 * `model request failed: ` and never holds the API key, URL credentials or a bearer token (they
 * are redacted before the error is built).
 */
import { APIConnectionTimeoutError, APIError } from 'openai'
import { SubagentError } from '../../lib/errors.ts'
import { redactSecrets } from '../../lib/redact.ts'

const prefix = 'model request failed: '
/** Longest server message kept in an error, in characters. */
const maxServerMessage = 300

const malformedChunkReason = 'the server sent a stream chunk that is not JSON'

/** A model request that did not complete. `status` is set for HTTP errors. */
export class ModelRequestError extends SubagentError {
  override readonly name = 'ModelRequestError'
  constructor(
    readonly reason: string,
    readonly status?: number,
    options?: ErrorOptions,
  ) {
    super('MODEL_FAILED', prefix + reason, options)
  }
}

/**
 * The provider's content filter cut the answer off (`finish_reason: "content_filter"`): the turn
 * must not pass for a completed answer. Code `CONTENT_FILTERED`.
 */
export class ContentFilterError extends SubagentError {
  override readonly name = 'ContentFilterError'
  constructor() {
    super('CONTENT_FILTERED', `${prefix}the provider's content filter stopped the answer`)
  }
}

/** `model request failed: timed out after <ms> ms` */
export function timeoutError(timeoutMs: number): ModelRequestError {
  return new ModelRequestError(`timed out after ${timeoutMs} ms`)
}

/** `model request failed: no API key (set <env>)` */
export function missingKeyError(env: string): ModelRequestError {
  return new ModelRequestError(`no API key (set ${env})`)
}

/** `model request failed: no model (set the "model" option)` */
export function missingModelError(): ModelRequestError {
  return new ModelRequestError('no model (set the "model" option)')
}

/**
 * The error a cancelled request throws: the signal's reason when it is an `Error`, else an
 * `AbortError` with the message `model request aborted`.
 */
export function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason
  return reason instanceof Error ? reason : new DOMException('model request aborted', 'AbortError')
}

/**
 * Turns whatever the client threw into a `ModelRequestError`:
 * `HTTP <status> (<server message>)`, `timed out after <ms> ms`, or the innermost cause's message.
 */
export function toModelRequestError(error: unknown, secrets: readonly string[], timeoutMs: number): SubagentError {
  if (error instanceof ModelRequestError || error instanceof ContentFilterError) return error
  if (error instanceof APIConnectionTimeoutError) return timeoutError(timeoutMs)
  // the parser's message quotes the chunk's first characters: a fragment of whatever it echoed
  if (error instanceof SyntaxError) return new ModelRequestError(malformedChunkReason)
  if (error instanceof APIError && typeof error.status === 'number') {
    const detail = serverMessage(error)
    const reason = detail ? `HTTP ${error.status} (${shorten(redactSecrets(detail, secrets))})` : `HTTP ${error.status}`
    // no `cause`: the response body may echo credentials
    return new ModelRequestError(reason, error.status)
  }
  if (error instanceof APIError) {
    // a status-less APIError: a connection failure (its cause says why) or an error event mid-stream
    const detail = serverMessage(error) ?? innermostMessage(error)
    return new ModelRequestError(shorten(redactSecrets(detail, secrets)))
  }
  return new ModelRequestError(shorten(redactSecrets(innermostMessage(error), secrets)))
}

/** The server's own words, from the `error` member of its JSON body or its plain-text body. */
function serverMessage(error: APIError): string | undefined {
  const body: unknown = error.error
  if (typeof body === 'string' && body) return body
  if (typeof body === 'object' && body !== null && 'message' in body && typeof body.message === 'string' && body.message) {
    return body.message
  }
  if (typeof error.status !== 'number') return undefined
  // without a JSON `error` member the client formats "<status> <text body>" or "<status> status code (no body)"
  const text = error.message.startsWith(`${error.status} `) ? error.message.slice(`${error.status} `.length) : ''
  return text && text !== 'status code (no body)' ? text : undefined
}

/** The most specific message along the `cause` chain: "fetch failed" says less than "connect ECONNREFUSED …". */
function innermostMessage(error: unknown): string {
  let message = error instanceof Error ? error.message : String(error)
  let current: unknown = error
  for (let depth = 0; depth < 4 && current instanceof Error && current.cause !== undefined; depth++) {
    current = current.cause
    if (current instanceof Error && current.message) message = current.message
  }
  return message || 'unknown error'
}

/** Whitespace collapsed and cut to 300 characters: server text can be long and multi-line. */
export function shorten(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > maxServerMessage ? `${flat.slice(0, maxServerMessage - 1)}…` : flat
}
