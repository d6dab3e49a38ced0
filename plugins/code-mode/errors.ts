/**
 * The error a `tools.<name>()` binding throws into the program when the nested call's result is an
 * error. Code `TOOL_FAILED`; the program sees the result's own code (`resultCode`), which may be
 * any tool's, so it stays data rather than becoming this error's code.
 */
import { SubagentError } from '../../lib/errors.ts'

export class ToolCallError extends SubagentError {
  override readonly name = 'ToolCallError'
  constructor(
    message: string,
    readonly resultCode: string | undefined,
  ) {
    super('TOOL_FAILED', message)
  }
}

/** The code a binding's failure shows the program: a nested tool's own, else the error's `code`. */
export function programCode(error: unknown): string | undefined {
  if (error instanceof ToolCallError) return error.resultCode
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : undefined
}
