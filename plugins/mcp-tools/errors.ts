/**
 * What a failed MCP tool call says, and the log lines of a server's life. Error messages are the
 * `Error: <message>` of the call's result; the timeout's is pinned by SPEC §13.
 */
import { SubagentError, thrownMessage } from '../../lib/errors.ts'

/** A call to an MCP tool that did not produce the tool's result. */
export class McpCallError extends SubagentError {
  override readonly name = 'McpCallError'
  constructor(
    code: 'MCP_TIMEOUT' | 'MCP_FAILED' | 'TOOL_FAILED',
    readonly server: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(code, message, options)
  }
}

/** `MCP server "<server>" did not answer within <ms> ms` (code `MCP_TIMEOUT`). */
export function timeoutMessage(server: string, ms: number): string {
  return `MCP server "${server}" did not answer within ${ms} ms`
}

export const callMessages = {
  notConnected: (server: string) => `MCP server "${server}" is not connected`,
  closed: (server: string) => `MCP server "${server}" closed the connection during the call`,
  unreachable: (server: string, why: string) => `MCP server "${server}" could not be reached: ${why}`,
  failed: (server: string, why: string) => `MCP server "${server}" failed the call: ${why}`,
  cancelled: (server: string) => `the call to MCP server "${server}" was cancelled`,
  toolError: (server: string) => `MCP server "${server}" reported an error with no text`,
}

/** Log lines (one per event, each naming the server and why). */
export const logLines = {
  connected: (server: string, tools: number) => `MCP server "${server}" connected: ${tools} ${tools === 1 ? 'tool' : 'tools'}`,
  startFailed: (server: string, why: string, retryMs: number) => `MCP server "${server}" failed to start: ${why}; retrying in ${retryMs} ms`,
  stopped: (server: string, why: string, retryMs: number) =>
    `MCP server "${server}" stopped: ${why}; its tools are removed until it is back (reconnecting in ${retryMs} ms)`,
  skipped: (server: string, reasons: readonly string[]) => {
    const shown = reasons.slice(0, 5).join('; ')
    const more = reasons.length > 5 ? `; and ${reasons.length - 5} more` : ''
    return `MCP server "${server}" listed ${reasons.length} ${reasons.length === 1 ? 'tool' : 'tools'} that cannot be used, left out: ${shown}${more}`
  },
  cut: (server: string, listed: number, kept: number) =>
    `MCP server "${server}" lists more than ${kept} tools (${listed} seen): only the first ${kept} are registered`,
  listFailed: (server: string, why: string) => `MCP server "${server}" could not list its tools: ${why}; its tools are unchanged`,
  junk: (server: string, why: string) =>
    `MCP server "${server}" sent something that is not a JSON-RPC message (ignored; later ones are not logged): ${why}`,
}

/** `error`'s message, with its cause's code or message when it has one (`fetch failed (ECONNREFUSED)`). */
export function described(error: unknown): string {
  const message = thrownMessage(error)
  const cause = (error as { cause?: unknown } | null)?.cause as { code?: unknown; message?: unknown } | undefined
  if (typeof cause !== 'object' || cause === null) return message
  const detail = typeof cause.code === 'string' ? cause.code : typeof cause.message === 'string' ? cause.message : undefined
  return detail && !message.includes(detail) ? `${message} (${detail})` : message
}

/** True for the SDK's complaint about a line that is not a JSON-RPC message. */
export function isParseError(error: unknown): boolean {
  return error instanceof SyntaxError || (error instanceof Error && (error.name === 'ZodError' || /JSON|json/.test(error.message)))
}
