/**
 * The SDK transport for one configured server: a child process over stdio, or Streamable HTTP.
 */
import { isAbsolute, resolve } from 'node:path'
import type { Readable } from 'node:stream'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'

/** A server started as a child process, spoken to over its stdin and stdout. */
export interface StdioServer {
  command: string
  args?: string[]
  /** Added to the few variables passed by default (`HOME`, `PATH`, `SHELL`, `TERM`, `USER`, `LOGNAME`). */
  env?: Record<string, string>
  /** Relative to the host config file's folder (the process's working folder without one). */
  cwd?: string
}

/** A server reached over Streamable HTTP. */
export interface HttpServer {
  url: string
  headers?: Record<string, string>
}

export type ServerConfig = StdioServer | HttpServer

export function isStdio(server: ServerConfig): server is StdioServer {
  return 'command' in server && typeof server.command === 'string'
}

/** The last lines a server wrote to stderr, kept to say why it stopped. */
export class StderrTail {
  private text = ''
  private partial = ''

  /** Keeps the last 4 KiB of `stream`'s text; each whole line also goes to `onLine`. */
  constructor(stream: Readable, onLine: (line: string) => void) {
    stream.setEncoding('utf8')
    stream.on('data', (chunk: string) => {
      this.text = (this.text + chunk).slice(-4096)
      const lines = (this.partial + chunk).split('\n')
      this.partial = lines.pop()!.slice(-4096)
      for (const line of lines) if (line.trim()) onLine(line.slice(0, 4096))
    })
  }

  /**
   * The last line that says something: not blank, not a stack frame (`    at …`), not Node's
   * closing version line. `undefined` when there is none.
   */
  lastWords(): string | undefined {
    const lines = this.text.split('\n').map((line) => line.trim())
    for (let index = lines.length - 1; index >= 0; index--) {
      const line = lines[index]!
      if (line && !line.startsWith('at ') && !/^Node\.js v\d/.test(line)) return line.length > 300 ? `${line.slice(0, 300)}…` : line
    }
    return undefined
  }
}

/** An open transport, and for a child process the tail of its stderr. */
export interface OpenedTransport {
  transport: Transport
  stderr?: StderrTail
  /** The child's pid once started (stdio only). */
  pid(): number | undefined
}

/**
 * The transport for `server`, not yet started (`Client.connect` starts it). A stdio server's
 * stderr is piped: its lines go to `onStderrLine`, never to this process's stderr.
 */
export function openTransport(server: ServerConfig, baseDir: string, onStderrLine: (line: string) => void): OpenedTransport {
  if (isStdio(server)) {
    const cwd = server.cwd === undefined ? baseDir : isAbsolute(server.cwd) ? server.cwd : resolve(baseDir, server.cwd)
    const transport = new StdioClientTransport({ command: server.command, args: server.args, env: server.env, cwd, stderr: 'pipe' })
    const stream = transport.stderr as Readable | null
    const stderr = stream ? new StderrTail(stream, onStderrLine) : undefined
    return { transport, stderr, pid: () => transport.pid ?? undefined }
  }
  const transport = new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: server.headers ?? {} } })
  return { transport, pid: () => undefined }
}
