/**
 * Failures of an OpenAI-compatible model request. Every message starts with
 * `model request failed: ` and never holds the API key, URL credentials or a bearer token (they
 * are redacted before the error is built).
 */
import { SubagentError } from '../../lib/errors.ts'

const prefix = 'model request failed: '
/** Longest server message kept in an error, in characters. */
const maxServerMessage = 300

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

/** `model request failed: the response held no chat completion chunks (content-type "<type>")` */
export function noChunksError(contentType: string | null): ModelRequestError {
  return new ModelRequestError(`the response held no chat completion chunks (content-type "${shorten(contentType ?? '')}")`)
}

/** A stream chunk the adapter cannot read (`problem` follows "stream chunk <n>"): failed, not skipped, so no part of an answer is lost quietly. */
export function malformedChunkError(position: number, problem: string): ModelRequestError {
  return new ModelRequestError(`stream chunk ${position} ${problem}`)
}

/** Whitespace collapsed and cut to 300 characters: server text can be long and multi-line. */
export function shorten(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > maxServerMessage ? `${flat.slice(0, maxServerMessage - 1)}…` : flat
}
