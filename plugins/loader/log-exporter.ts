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
}

const tags: Record<string, string> = { error: 'error', warn: 'warning', info: 'info', debug: 'debug' }

/** Writes each message as `<type> [<logger>] <text>` through `write`. Lives as long as `ctx`'s fiber. */
export function printLogs(ctx: Context, write: (line: string) => void, options: PrintLogsOptions = {}): () => Promise<void> {
  const exporter = {
    colors: options.colors ?? 0,
    levels: { default: options.level ?? 1 },
    export(message: Message) {
      const name = Logger.color(exporter, Logger.code(message.name, exporter.colors), message.name)
      // a message may quote data (a config value, a file name): its control characters are shown, never sent
      write(`${tags[message.type] ?? message.type} [${name}] ${printable(Logger.format(exporter, message))}\n`)
    },
  }
  return ctx.logger.exporter(exporter)
}
