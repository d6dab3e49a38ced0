/**
 * Reads an idle child's result from its session log (SPEC §2.4). Pure and O(own events): one
 * backward scan, plus a forward pass over the streamed text only when no message carries content.
 */
import { format } from './i18n.ts'
import type { ContentBlock, SessionEvent, SessionEventData, StopReason, TurnEndReason, Usage } from './types.ts'
import { redactSecrets } from './redact.ts'

/** What the driver reads from the child; `structured` is added by `StructuredOutput`. */
export interface ReadResult {
  output: ContentBlock[]
  stopReason: StopReason
  /** Present on every result that is not `completed`. */
  diagnostic?: string
  /** Present when at least one own `assistant/message` reported usage. */
  usage?: Usage
}

/** Upper bound of a diagnostic, in UTF-8 bytes. */
export const DIAGNOSTIC_MAX_BYTES = 4096

const ELLIPSIS = '…'
const ELLIPSIS_BYTES = 3

/** The templates diagnostics are built from (`diagnostic.*` in `locales/*.yml`). */
export interface DiagnosticTexts {
  readonly cancelled: string
  /** `{cause}`: the cancel cause's kind. */
  readonly cancelledBy: string
  readonly neverRan: string
  readonly failed: string
  /** `{message}`: the turn error's message. */
  readonly failedWithMessage: string
  /** `{code}`: the turn error's code. */
  readonly failedWithCode: string
  readonly failedWithMessageAndCode: string
  readonly interrupted: string
  readonly unknownEnd: string
  readonly tokenLimit: string
  readonly blocked: string
  /** `{limit}`, `{used}`, `{max}`: the budget that stopped the turn (SPEC §9). */
  readonly budget: string
  /** `{limit}`: a budget stop whose figures the turn end does not carry. */
  readonly budgetLimit: string
}

/**
 * The English templates, used unless others are passed in. `SubagentResult.diagnostic` is result
 * data and stays English like error messages (lib reads no files); test/locales checks that these
 * equal `diagnostic.*` in `locales/en-US.yml`, where `SubagentTool` localizes them from.
 */
export const DIAGNOSTIC_TEXTS: DiagnosticTexts = Object.freeze({
  cancelled: 'the run was cancelled',
  cancelledBy: 'the run was cancelled ({cause})',
  neverRan: 'the child never ran a turn',
  failed: 'the child turn failed',
  failedWithMessage: 'the child turn failed: {message}',
  failedWithCode: 'the child turn failed ({code})',
  failedWithMessageAndCode: 'the child turn failed: {message} ({code})',
  interrupted: 'the child turn was interrupted',
  unknownEnd: 'the child turn ended for an unknown reason',
  tokenLimit: 'the child hit its token limit',
  blocked: 'a pre-step hook blocked the child turn',
  budget: 'the delegation tree exhausted its {limit} budget ({used} of {max})',
  budgetLimit: 'the delegation tree exhausted its {limit} budget',
})

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
 * - `diagnostic` (every non-completed result; at most 4096 UTF-8 bytes, cut on a character boundary
 *   and ended with `…`): `the run was cancelled (<cause kind>)` when the turn ended aborted with a
 *   cause, else `the run was cancelled`; `the child turn failed: <message> (<code>)` (the code part
 *   only when present; `the child turn failed` alone when the message is empty);
 *   `the child turn was interrupted`; `the child turn ended for an unknown reason`;
 *   `the child hit its token limit`; `a pre-step hook blocked the child turn`;
 *   `the child never ran a turn`; `the delegation tree exhausted its <limit> budget (<used> of <max>)`.
 *   Nothing else of the error (no stack, no arguments) is included.
 * - `usage`: the sum over own `assistant/message` events that carry one; absent when none does.
 *
 * `texts` replaces the diagnostic templates above (default `DIAGNOSTIC_TEXTS`).
 */
export function readResult(
  events: readonly SessionEvent[],
  seedLength: number,
  cancelled: boolean,
  texts: DiagnosticTexts = DIAGNOSTIC_TEXTS,
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
    switch (event.type) {
      case 'assistant/message': {
        const data = event.data as SessionEventData['assistant/message']
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
        const data = event.data as SessionEventData['turn/end']
        const kind = data.reason.kind
        // a blocked, aborted, failed or budget-stopped turn claimed input even when no step started
        if (kind === 'blocked' || kind === 'aborted' || kind === 'error' || kind === 'budget') reason = data.reason
        else pending = data
        break
      }
      case 'step/start':
        if (pending !== undefined && (event.data as SessionEventData['step/start']).turn === pending.turn) {
          reason = pending.reason
          pending = undefined
        }
        break
      case 'turn/start':
        if (pending !== undefined && (event.data as SessionEventData['turn/start']).turn === pending.turn) {
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

  // an adapter's or tool's message may quote a URL with credentials or a bearer token
  const diagnostic = stopReason !== 'completed' ? truncate(redactSecrets(diagnose(stopReason, reason, texts))) : undefined
  const usage = hasUsage ? { inputTokens, outputTokens } : undefined
  // each shape written whole: a result grown key by key needs a second block for its keys, and
  // a finished child holds its result for as long as it lives
  if (diagnostic === undefined) return usage ? { output, stopReason, usage } : { output, stopReason }
  return usage ? { output, stopReason, diagnostic, usage } : { output, stopReason, diagnostic }
}

function streamedText(events: readonly SessionEvent[], from: number): ContentBlock[] {
  let text = ''
  for (let i = from; i < events.length; i++) {
    const event = events[i]
    if (event.type === 'assistant/delta') text += (event.data as SessionEventData['assistant/delta']).text
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

function diagnose(stopReason: StopReason, reason: TurnEndReason | undefined, texts: DiagnosticTexts): string {
  switch (stopReason) {
    case 'aborted': {
      const cause: unknown = reason?.kind === 'aborted' ? reason.cause?.kind : undefined
      return typeof cause === 'string' && cause !== '' ? format(texts.cancelledBy, { cause }) : texts.cancelled
    }
    case 'max-tokens':
      return texts.tokenLimit
    case 'refusal':
      return texts.blocked
    case 'budget':
      return diagnoseBudget(reason, texts)
    default:
      return diagnoseError(reason, texts)
  }
}

function diagnoseBudget(reason: TurnEndReason | undefined, texts: DiagnosticTexts): string {
  if (reason?.kind !== 'budget') return texts.unknownEnd
  const { limit, used, max } = reason
  return typeof used === 'number' && typeof max === 'number'
    ? format(texts.budget, { limit, used: String(used), max: String(max) })
    : format(texts.budgetLimit, { limit })
}

function diagnoseError(reason: TurnEndReason | undefined, texts: DiagnosticTexts): string {
  if (reason === undefined) return texts.neverRan
  if (reason.kind === 'interrupted') return texts.interrupted
  if (reason.kind !== 'error') return texts.unknownEnd
  // only the message and code: an error's other fields may carry stacks or arguments
  const message = reason.error?.message
  const code = reason.error?.code
  const hasMessage = typeof message === 'string' && message !== ''
  const hasCode = typeof code === 'string' && code !== ''
  if (hasMessage && hasCode) return format(texts.failedWithMessageAndCode, { message, code })
  if (hasMessage) return format(texts.failedWithMessage, { message })
  if (hasCode) return format(texts.failedWithCode, { code })
  return texts.failed
}

/** Cuts `text` to at most `DIAGNOSTIC_MAX_BYTES` UTF-8 bytes on a code-point boundary, ending with `…`. */
function truncate(text: string): string {
  // a UTF-16 unit never takes more than 3 UTF-8 bytes (a surrogate pair takes 4 for two units)
  if (text.length * 3 <= DIAGNOSTIC_MAX_BYTES) return text
  const budget = DIAGNOSTIC_MAX_BYTES - ELLIPSIS_BYTES
  let bytes = 0
  let cut = 0
  for (let i = 0; i < text.length; ) {
    const unit = text.charCodeAt(i)
    let size: number
    let width = 1
    if (unit < 0x80) size = 1
    else if (unit < 0x800) size = 2
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length && isLowSurrogate(text.charCodeAt(i + 1))) {
      size = 4
      width = 2
    } else size = 3 // includes a lone surrogate, which encodes as U+FFFD
    bytes += size
    i += width
    if (bytes <= budget) cut = i
    else if (bytes > DIAGNOSTIC_MAX_BYTES) return text.slice(0, cut) + ELLIPSIS
  }
  return text
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff
}
