/**
 * `POST /approvals/decide`: the page's Approve / Deny / Always buttons (SPEC §11.4). The page
 * carries the server's secret (generated when the server is made, kept in memory, written only
 * into the page) and sends it back in the `x-inspector-secret` header; a page of another origin
 * can neither read it nor send that header without a CORS preflight the server never grants. A
 * request from another origin, or without the secret or with a wrong one, is answered 403 before
 * its body is read, and decides nothing.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { ApprovalDesk, DeskDecision } from './approval-desk.ts'

export const DECISION_PATH = '/approvals/decide'
/** The one method the decision route takes. */
export const DECISION_METHOD = 'POST'
export const SECRET_HEADER = 'x-inspector-secret'

/** Bytes of a decision body read at most; a longer body is refused (413). */
export const MAX_DECISION_BYTES = 16 * 1024

/** A reason longer than this many characters is refused (400). */
export const MAX_REASON_CHARS = 2000

/** The body of a 403 for a request sent from another origin. */
export const foreignOriginMessage = (origin: string) => `the inspector decides only for its own page; Origin "${origin}" refused\n`

/** The body of a 403 for a request without the page's secret or with a wrong one. */
export const wrongSecretMessage = `the inspector decides only with its page's secret (header ${SECRET_HEADER})\n`

/** A fresh secret: 32 random bytes, base64url (safe in an HTML attribute and in a header). */
export function newSecret(): string {
  return randomBytes(32).toString('base64url')
}

function sameSecret(given: string | string[] | undefined, secret: string): boolean {
  if (typeof given !== 'string') return false
  const a = Buffer.from(given)
  const b = Buffer.from(secret)
  return a.length === b.length && timingSafeEqual(a, b)
}

function answer(response: ServerResponse, status: number, body: string): void {
  response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' }).end(body)
}

/** The decision in `body`, or the reason it is not one. */
export function readDecision(body: string): { id: string; decision: DeskDecision } | { problem: string } {
  let value: unknown
  try {
    value = JSON.parse(body)
  } catch {
    return { problem: 'the body is not JSON' }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { problem: 'the body must be a JSON object' }
  const { id, approved, reason, remember, ...rest } = value as Record<string, unknown>
  const unknown = Object.keys(rest)
  if (unknown.length) return { problem: `unknown field "${unknown[0]}" (id, approved, reason, remember)` }
  if (typeof id !== 'string' || !id) return { problem: '"id" must be a non-empty string' }
  if (typeof approved !== 'boolean') return { problem: '"approved" must be true or false' }
  if (reason !== undefined && (typeof reason !== 'string' || reason.length > MAX_REASON_CHARS)) {
    return { problem: `"reason" must be a string of at most ${MAX_REASON_CHARS} characters` }
  }
  if (remember !== undefined && remember !== 'tree') return { problem: '"remember" must be "tree" when given' }
  const decision: DeskDecision = { approved }
  if (reason !== undefined && reason !== '') decision.reason = reason
  if (remember === 'tree') decision.remember = 'tree'
  return { id, decision }
}

/**
 * Answers one `POST /approvals/decide`: 403 for a foreign `Origin` or a missing or wrong secret,
 * 415 for a body that is not `application/json`, 413 for one over `MAX_DECISION_BYTES`, 400 for
 * one that is not a decision, 409 with the service's message when the request is not pending,
 * 204 once decided. `origins` are the page's own origins.
 */
export function handleDecision(request: IncomingMessage, response: ServerResponse, desk: ApprovalDesk, secret: string, origins: readonly string[]): void {
  const origin = request.headers.origin
  if (origin !== undefined && !origins.includes(origin)) {
    answer(response, 403, foreignOriginMessage(origin))
    return
  }
  if (!sameSecret(request.headers[SECRET_HEADER], secret)) {
    answer(response, 403, wrongSecretMessage)
    return
  }
  if (!/^application\/json\s*(;|$)/i.test(request.headers['content-type'] ?? '')) {
    answer(response, 415, 'a decision is sent as application/json\n')
    return
  }
  const chunks: Buffer[] = []
  let size = 0
  let refused = false
  request.on('data', (chunk: Buffer) => {
    if (refused) return
    size += chunk.length
    if (size > MAX_DECISION_BYTES) {
      refused = true
      answer(response, 413, `a decision is at most ${MAX_DECISION_BYTES} bytes\n`)
      request.resume()
      return
    }
    chunks.push(chunk)
  })
  request.on('error', () => response.destroy())
  request.on('end', () => {
    if (refused) return
    const read = readDecision(Buffer.concat(chunks).toString('utf8'))
    if ('problem' in read) {
      answer(response, 400, `${read.problem}\n`)
      return
    }
    desk.decide(read.id, read.decision).then(
      () => void response.writeHead(204, { 'cache-control': 'no-store' }).end(),
      (error: unknown) => answer(response, 409, `${error instanceof Error ? error.message : String(error)}\n`),
    )
  })
}
