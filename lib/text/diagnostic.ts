/**
 * A run's diagnostic as data: a `diagnostic.*` key of `locales/*.yml` and its params. It is made
 * where the reason is known (`readResult`, `StructuredOutput`) and rendered only where a caller,
 * a model or a user reads it, in that reader's locale, so nothing ever parses an English sentence
 * back. Plain code: the texts live in the locale files, not here.
 */

/** The params of each `diagnostic.<key>` template, by placeholder name. */
export interface DiagnosticParams {
  cancelled: Record<never, never>
  /** `cause`: the cancel cause's kind. */
  cancelledBy: { cause: string }
  neverRan: Record<never, never>
  failed: Record<never, never>
  /** `message`: the turn error's message, secrets redacted. */
  failedWithMessage: { message: string }
  /** `code`: the turn error's code. */
  failedWithCode: { code: string }
  failedWithMessageAndCode: { message: string; code: string }
  interrupted: Record<never, never>
  unknownEnd: Record<never, never>
  tokenLimit: Record<never, never>
  blocked: Record<never, never>
  /** The budget that stopped the turn (SPEC §9). */
  budget: { limit: string; used: number; max: number }
  /** A budget stop whose figures the turn end does not carry. */
  budgetLimit: { limit: string }
  missingCapture: Record<never, never>
  cancelledBeforeCapture: Record<never, never>
  /** A background run whose process stopped before it finished, delivered after a resume (SPEC §14). */
  processStopped: Record<never, never>
}

export type DiagnosticKey = keyof DiagnosticParams

/** One diagnostic: which text, and the values of its placeholders. Plain JSON data. */
export type Diagnostic = {
  [K in DiagnosticKey]: { readonly key: K; readonly params: Readonly<DiagnosticParams[K]> }
}[DiagnosticKey]

/**
 * The placeholder names of every diagnostic key: the runtime mirror of `DiagnosticParams`, which
 * test/locales checks against both locale files.
 */
export const DIAGNOSTIC_PARAM_NAMES: { readonly [K in DiagnosticKey]: readonly (keyof DiagnosticParams[K])[] } = Object.freeze({
  cancelled: [],
  cancelledBy: ['cause'],
  neverRan: [],
  failed: [],
  failedWithMessage: ['message'],
  failedWithCode: ['code'],
  failedWithMessageAndCode: ['message', 'code'],
  interrupted: [],
  unknownEnd: [],
  tokenLimit: [],
  blocked: [],
  budget: ['limit', 'used', 'max'],
  budgetLimit: ['limit'],
  missingCapture: [],
  cancelledBeforeCapture: [],
  processStopped: [],
})

/** Upper bound of a rendered diagnostic, in UTF-8 bytes (SPEC §2.4). */
export const DIAGNOSTIC_MAX_BYTES = 4096

const ELLIPSIS = '…'
const ELLIPSIS_BYTES = 3

/** `text` cut to at most `DIAGNOSTIC_MAX_BYTES` UTF-8 bytes on a code-point boundary, ending with `…`. */
export function boundDiagnostic(text: string): string {
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

/** Turns a diagnostic into its text in one locale (see `renderDiagnostic` in `locales/index.ts`). */
export type DiagnosticRenderer = (diagnostic: Diagnostic) => string
