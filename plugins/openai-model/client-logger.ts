/**
 * The `openai` client's logging, routed through ours: it would otherwise write to `console`
 * (on a malformed stream chunk, the raw chunk itself), past the host's logger and its secrets.
 */
import { format } from 'node:util'
import type { ClientOptions } from 'openai'
import { redactSecrets } from '../../lib/text/redact.ts'
import { shorten } from './errors.ts'

type ClientLogger = NonNullable<ClientOptions['logger']>

/** Where the adapter's log lines go: a cordis logger, `console`, or anything with these methods. */
export interface AdapterLogger {
  error(text: string): void
  warn(text: string): void
  info(text: string): void
  debug(text: string): void
}

/**
 * A client logger that formats each call into one line, redacts secrets and URL credentials
 * from it, cuts it to 300 characters and hands it to `target` at the same level. Never throws.
 */
export function redactingLogger(target: AdapterLogger, secrets: readonly string[]): ClientLogger {
  const forward =
    (level: keyof AdapterLogger) =>
    (message: string, ...rest: unknown[]): void => {
      try {
        target[level](`openai client: ${shorten(redactSecrets(format(message, ...rest), secrets))}`)
      } catch {}
    }
  return { error: forward('error'), warn: forward('warn'), info: forward('info'), debug: forward('debug') }
}
