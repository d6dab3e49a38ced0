/**
 * Type tests, checked by `npm run typecheck` (never run): the error code union is closed, and a
 * diagnostic's params are those of its key.
 */
import { type Diagnostic, type ErrorCode, SubagentError, type SubagentResult } from '../../index.ts'

export function closedCodes(): SubagentError[] {
  return [
    new SubagentError('SANDBOX', 'ok'),
    // @ts-expect-error a code outside the taxonomy
    new SubagentError('SOMETHING_ELSE', 'no'),
  ]
}

export function looseCode(code: string): ErrorCode {
  // @ts-expect-error a plain string is not a code: the union has no string member
  return code
}

export const diagnostics: Diagnostic[] = [
  { key: 'budget', params: { limit: 'tokens', used: 12, max: 10 } },
  { key: 'cancelled', params: {} },
  // @ts-expect-error the budget text needs its figures
  { key: 'budget', params: { limit: 'tokens' } },
  // @ts-expect-error a key that no locale file defines
  { key: 'somethingElse', params: {} },
]

export function routeOnKey(result: SubagentResult): string | undefined {
  // routing reads the key, never the English text
  return result.diagnosticText?.key === 'budget' ? result.diagnosticText.params.limit : undefined
}
