/**
 * Reads an idle child's result from its session log (SPEC §2.4). Pure and O(own events): one
 * backward scan, plus a forward pass over the streamed text only when no message carries content.
 */
import { boundDiagnostic, type Diagnostic, type DiagnosticRenderer } from '../text/diagnostic.ts'
import { isEvent, isKnownEvent } from './session-event.ts'
import type { ContentBlock, SessionEvent, SessionEventData, StopReason, TurnEndReason, Usage } from '../types.ts'
import { redactSecrets } from '../text/redact.ts'

/** What the driver reads from the child; `structured` is added by `StructuredOutput`. */
export interface ReadResult {
  output: ContentBlock[]
  stopReason: StopReason
  /** Present on every result that is not `completed`: `diagnosticText` rendered by the caller's renderer. */
  diagnostic?: string
  /** The same diagnostic as key and params, to render in another locale or route on. */
  diagnosticText?: Diagnostic
  /** Present when at least one own `assistant/message` reported usage. */
  usage?: Usage
}

/**
 * Reads the result from `events`, counting only the child's own events (index `seedLength` on):
 * seeded parent history never contributes to output, stop reason or usage.
 *
 * - `output`: a copy of the content of the last own `assistant/message` with non-empty content;
 *   else all own `assistant/delta` text as one text block; else `[]`.
 * - `stopReason`: from the last own `turn/end` of a turn that did work — it had a `step/start`
 *   (matched by `turn`), or ended `blocked`, `aborted` or `error` after claiming input. completed →
 *   `completed`, max-tokens → `max-tokens`, aborted → `aborted`, blocked → `refusal`, budget → `budget`, error,
 *   interrupted or an unknown kind → `error`; no such turn → `error`. When `cancelled`, every
 *   reason but `completed` becomes `aborted`.
 * - `diagnosticText` (every non-completed result), a `diagnostic.*` key: `cancelledBy` {cause kind}
 *   when the turn ended aborted with a cause, else `cancelled`; `failedWithMessageAndCode`,
 *   `failedWithMessage`, `failedWithCode` or `failed`, by which of the turn error's message and code
 *   are non-empty (the message with secrets redacted); `interrupted`; `unknownEnd`; `tokenLimit`;
 *   `blocked`; `neverRan`; `budget` {limit, used, max}, or `budgetLimit` {limit} without figures.
 *   Nothing else of the error (no stack, no arguments) is included. `diagnostic` is it rendered by
 *   `render` (the driver passes en-US, whose texts SPEC §2.4 pins).
 * - `usage`: the sum over own `assistant/message` events that carry one; absent when none does.
 */
export function readResult(
  events: readonly SessionEvent[],
  seedLength: number,
  cancelled: boolean,
  render: DiagnosticRenderer,
): ReadResult {
  const start = Math.max(seedLength, 0)
  let content: ContentBlock[] | undefined
  let firstDelta = -1
  let hasUsage = false
  let inputTokens = 0
  let outputTokens = 0
  // the stop reason of the last turn that did work, and a later-ending candidate still undecided
  let reason: TurnEndReason | undefined
  let pending: SessionEventData['turn/end'] | undefined

  for (let i = events.length - 1; i >= start; i--) {
    const event = events[i]
    if (!isKnownEvent(event)) continue
    switch (event.type) {
      case 'assistant/message': {
        const { data } = event
        if (content === undefined && data.content.length > 0) content = data.content
        if (data.usage !== undefined) {
          hasUsage = true
          inputTokens += data.usage.inputTokens
          outputTokens += data.usage.outputTokens
        }
        break
      }
      case 'assistant/delta':
        if (content === undefined) firstDelta = i
        break
      case 'turn/end': {
        if (reason !== undefined) break
        const { data } = event
        const kind = data.reason.kind
        // a blocked, aborted, failed or budget-stopped turn claimed input even when no step started
        if (kind === 'blocked' || kind === 'aborted' || kind === 'error' || kind === 'budget') reason = data.reason
        else pending = data
        break
      }
      case 'step/start':
        if (pending !== undefined && event.data.turn === pending.turn) {
          reason = pending.reason
          pending = undefined
        }
        break
      case 'turn/start':
        if (pending !== undefined && event.data.turn === pending.turn) {
          pending = undefined
        }
        break
    }
  }

  let output: ContentBlock[]
  if (content !== undefined) output = content.slice()
  else if (firstDelta >= 0) output = streamedText(events, firstDelta)
  else output = []

  let stopReason = stopReasonOf(reason)
  if (cancelled && stopReason !== 'completed') stopReason = 'aborted'

  const usage = hasUsage ? { inputTokens, outputTokens } : undefined
  // each shape written whole: a result grown key by key needs a second block for its keys, and
  // a finished child holds its result for as long as it lives
  if (stopReason === 'completed') return usage ? { output, stopReason, usage } : { output, stopReason }
  const diagnosticText = diagnose(stopReason, reason)
  const diagnostic = render(diagnosticText)
  return usage ? { output, stopReason, diagnostic, diagnosticText, usage } : { output, stopReason, diagnostic, diagnosticText }
}

function streamedText(events: readonly SessionEvent[], from: number): ContentBlock[] {
  let text = ''
  for (let i = from; i < events.length; i++) {
    const event = events[i]
    if (isEvent(event, 'assistant/delta')) text += event.data.text
  }
  return text === '' ? [] : [{ type: 'text', text }]
}

function stopReasonOf(reason: TurnEndReason | undefined): StopReason {
  switch (reason?.kind) {
    case 'completed':
      return 'completed'
    case 'max-tokens':
      return 'max-tokens'
    case 'aborted':
      return 'aborted'
    case 'blocked':
      return 'refusal'
    case 'budget':
      return 'budget'
    default:
      return 'error'
  }
}

function diagnose(stopReason: StopReason, reason: TurnEndReason | undefined): Diagnostic {
  switch (stopReason) {
    case 'aborted': {
      const cause: unknown = reason?.kind === 'aborted' ? reason.cause?.kind : undefined
      return typeof cause === 'string' && cause !== '' ? { key: 'cancelledBy', params: { cause: redactSecrets(cause) } } : { key: 'cancelled', params: {} }
    }
    case 'max-tokens':
      return { key: 'tokenLimit', params: {} }
    case 'refusal':
      return { key: 'blocked', params: {} }
    case 'budget':
      return diagnoseBudget(reason)
    default:
      return diagnoseError(reason)
  }
}

function diagnoseBudget(reason: TurnEndReason | undefined): Diagnostic {
  if (reason?.kind !== 'budget') return { key: 'unknownEnd', params: {} }
  const { limit, used, max } = reason
  return typeof used === 'number' && typeof max === 'number'
    ? { key: 'budget', params: { limit, used, max } }
    : { key: 'budgetLimit', params: { limit } }
}

function diagnoseError(reason: TurnEndReason | undefined): Diagnostic {
  if (reason === undefined) return { key: 'neverRan', params: {} }
  if (reason.kind === 'interrupted') return { key: 'interrupted', params: {} }
  if (reason.kind !== 'error') return { key: 'unknownEnd', params: {} }
  // only the message and code: an error's other fields may carry stacks or arguments
  const message = reason.error?.message
  const code = reason.error?.code
  const hasMessage = typeof message === 'string' && message !== ''
  const hasCode = typeof code === 'string' && code !== ''
  // an adapter's or tool's message may quote a URL with credentials or a bearer token, and the
  // carried params stay as bounded as any rendering of them
  if (hasMessage && hasCode) {
    return { key: 'failedWithMessageAndCode', params: { message: boundDiagnostic(redactSecrets(message)), code: redactSecrets(code) } }
  }
  if (hasMessage) return { key: 'failedWithMessage', params: { message: boundDiagnostic(redactSecrets(message)) } }
  if (hasCode) return { key: 'failedWithCode', params: { code: redactSecrets(code) } }
  return { key: 'failed', params: {} }
}
