/**
 * Maps the `openai` client's errors to `ModelRequestError`. Kept apart from `errors.ts` because it
 * needs the client's classes: only the adapter, which `OpenAIModel` imports lazily, loads it.
 */
import { APIConnectionTimeoutError, APIError } from 'openai'
import { type SubagentError, thrownMessage } from '../../lib/errors.ts'
import { redactSecrets } from '../../lib/text/redact.ts'
import { ContentFilterError, ModelRequestError, shorten, timeoutError } from './errors.ts'

const malformedChunkReason = 'the server sent a stream chunk that is not JSON'

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
  let message = thrownMessage(error)
  let current: unknown = error
  for (let depth = 0; depth < 4 && current instanceof Error && current.cause !== undefined; depth++) {
    current = current.cause
    if (current instanceof Error && current.message) message = current.message
  }
  return message || 'unknown error'
}
