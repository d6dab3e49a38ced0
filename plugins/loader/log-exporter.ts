/**
 * Prints cordis log messages (warnings and errors by default) as lines of text. cordis 4 prints
 * nothing by default, so without this a failing plugin is silent.
 */
import { type Context, Logger, type Message } from 'cordis'
import { printable } from '../../lib/text/terminal-text.ts'

export interface PrintLogsOptions {
  /** Most verbose level printed: 0 errors, 1 warnings (default), 2 info, 3 debug. */
  level?: number
  /** ANSI colours for the logger name (cordis `colors`: 0 none … 3 true colour). */
  colors?: number
  /**
   * Print a logged error with its stack and, before it, its `cause` (cordis logs the cause as a
   * message of its own). Default: only at level 3 (debug). Otherwise an error is one line,
   * `<name>: <message>`, and a cause logged just before the error it caused is left out: the
   * message a user acts on (`npm i openai@…`) is not buried under stack traces.
   */
  stacks?: boolean
}

const tags: Record<string, string> = { error: 'error', warn: 'warning', info: 'info', debug: 'debug' }

/** The error a message logs on its own (`logger.error(error)`), if that is all it holds. */
function loggedError(message: Message): Error | undefined {
  const [only] = message.args
  return message.args.length === 1 && only instanceof Error ? only : undefined
}

/** Writes each message as `<type> [<logger>] <text>` through `write`. Lives as long as `ctx`'s fiber. */
export function printLogs(ctx: Context, write: (line: string) => void, options: PrintLogsOptions = {}): () => Promise<void> {
  const level = options.level ?? 1
  const stacks = options.stacks ?? level >= 3
  // an error's line waits one microtask: cordis logs a cause first, then, synchronously, the error
  let pending: { error: Error; line: string } | undefined
  const flush = () => {
    if (pending) write(pending.line)
    pending = undefined
  }
  const exporter = {
    colors: options.colors ?? 0,
    levels: { default: level },
    export(message: Message) {
      const name = Logger.color(exporter, Logger.code(message.name, exporter.colors), message.name)
      const error = stacks ? undefined : loggedError(message)
      // a message may quote data (a config value, a file name): its control characters are shown, never sent
      const body = error ? `${error.name}: ${error.message}` : Logger.format(exporter, message)
      const line = `${tags[message.type] ?? message.type} [${name}] ${printable(body)}\n`
      if (pending && error && error.cause === pending.error) pending = undefined
      flush()
      if (!error) return write(line)
      pending = { error, line }
      queueMicrotask(flush)
    },
  }
  return ctx.logger.exporter(exporter)
}
