/**
 * Turns the error of a failed plugin import into a message a user can act on: where a syntax
 * error is, and what to do about a `.ts` file that plain Node cannot load.
 */
import { spawnSync } from 'node:child_process'
import { thrownMessage } from '../../lib/errors.ts'

function codeOf(error: unknown): unknown {
  return (error as { code?: unknown } | null)?.code
}

/**
 * Node's `SyntaxError` from `import()` names neither the file nor the line (tsx's does). Node's
 * own `--check` does, with the line and a caret under the column; it runs only on this error path.
 */
function syntaxLocation(file: string): string | undefined {
  const check = spawnSync(process.execPath, ['--check', file], { encoding: 'utf8', timeout: 10_000 })
  if (check.status === 0 || !check.stderr) return undefined
  // keep "<file>:<line>", the source line and the caret; drop the repeated message and the stack
  const frame = check.stderr.split(/\n\s*\n/)[0]?.trimEnd()
  return frame?.startsWith(file) ? frame : undefined
}

/**
 * The text after `cannot load <source>: ` for an import of `file` (absent for a package) that
 * threw `error`: the error's message, plus the syntax error's location and code frame, or a hint
 * when a `.ts` file is imported without a TypeScript loader.
 */
export function describeImportError(error: unknown, file?: string): string {
  const message = thrownMessage(error)
  if (codeOf(error) === 'ERR_UNKNOWN_FILE_EXTENSION' && /\.[cm]?ts$/.test(file ?? '')) {
    return `${message} (a TypeScript plugin needs a loader: run the host under tsx, e.g. "node --import tsx", or build the plugin to .js)`
  }
  if (error instanceof SyntaxError && file && !message.includes(file)) {
    const location = syntaxLocation(file)
    if (location) return `${message} at ${location}`
  }
  return message
}
