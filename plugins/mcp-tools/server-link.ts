/**
 * One configured MCP server for the plugin's lifetime: one connection (never one per agent), its
 * tools registered as global host tools, list changes followed, loss noticed, reconnection with
 * backoff, and a close that leaves no child process behind.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { ErrorCode, McpError, ResultSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js'
import { thrownMessage } from '../../lib/errors.ts'
import { callOutcome } from '../../lib/mcp/call-content.ts'
import { reconnectDelay } from '../../lib/mcp/reconnect-delay.ts'
import { type ListedTool, MAX_TOOLS_PER_SERVER, sortListing } from '../../lib/mcp/tool-listing.ts'
import type { ToolDefinition, ToolExecution, ToolResult } from '../../lib/types.ts'
import { callMessages, described, isParseError, logLines, McpCallError, timeoutMessage } from './errors.ts'
import { ensureExited } from './process-exit.ts'
import { isStdio, type OpenedTransport, openTransport, type ServerConfig } from './transport.ts'

/** Where a link's log lines go (a cordis logger). */
export interface LinkLogger {
  info(message: string): void
  warn(message: string): void
  debug(message: string): void
}

export interface LinkOptions {
  /** Ms a tool call may take. */
  timeout: number
  /** Ms the start-up handshake, and each page of the tool list, may take. */
  startTimeout: number
  /** Ms before the first reconnection; doubled after each failure in a row. */
  reconnectDelay: number
  /** The longest wait between two attempts. */
  maxReconnectDelay: number
  /** Folder a relative stdio `cwd` is resolved against, and the default `cwd`. */
  baseDir: string
  logger: LinkLogger
  /** Registers a global tool; returns its remover. Throws what `ctx.tools.register` throws. */
  register(def: ToolDefinition): () => void
}

/** Pages of `tools/list` read at most (a server whose cursor never ends is cut there). */
const MAX_LIST_PAGES = 64

const CLIENT_INFO = { name: 'subagent-inprocess', version: '1' }

/** One connection attempt's state: its client, transport and why it ended. */
interface Connection {
  readonly client: Client
  readonly opened: OpenedTransport
  /** Set once this connection is the live one (initialized and listed). */
  isLive: boolean
  /** Set when it ended (closed by us, or lost). */
  isOver: boolean
  /** The stdio server's process, once spawned. */
  pid?: number
  /** Why the transport failed, when it said. */
  lastError?: string
  hasLoggedJunk: boolean
}

/**
 * The life of one server. `start()` makes the first attempt and resolves when it connected or
 * failed (never rejects); a failure or a loss removes the server's tools, logs one line and
 * schedules the next attempt. `close()` ends everything and resolves once the server's process
 * (stdio) has exited.
 */
export class ServerLink {
  private connection?: Connection
  private readonly removers: (() => void)[] = []
  private failures = 0
  private timer?: NodeJS.Timeout
  private isClosed = false
  private listing?: Promise<void>
  private isRelistWanted = false
  /** Pids of every process this link started that may still run. */
  private readonly pids = new Set<number>()
  private readonly closing = new Set<Promise<void>>()

  constructor(
    readonly server: string,
    private readonly config: ServerConfig,
    private readonly options: LinkOptions,
  ) {}

  /** Names of the host tools this server has registered now. */
  get toolNames(): string[] {
    return this.registered.map((tool) => tool.name)
  }

  private registered: ListedTool[] = []

  /** True while connected with the tools registered. */
  get isConnected(): boolean {
    return this.connection?.isLive === true && !this.connection.isOver
  }

  /** The pid of the live stdio server's process, if any. */
  get pid(): number | undefined {
    return this.connection?.isLive ? this.connection.pid : undefined
  }

  /** First connection attempt; resolves when connected or failed (a failure schedules a retry). */
  start(): Promise<void> {
    return this.attempt()
  }

  /** The attempt under way, if any (`close` waits for it, so a process being spawned is not missed). */
  private attempting?: Promise<void>

  private attempt(): Promise<void> {
    const attempt = this.connect().finally(() => {
      if (this.attempting === attempt) this.attempting = undefined
    })
    this.attempting = attempt
    return attempt
  }

  private async connect(): Promise<void> {
    if (this.isClosed) return
    const { logger } = this.options
    const connection: Connection = {
      client: new Client(CLIENT_INFO, { capabilities: {} }),
      opened: openTransport(this.config, this.options.baseDir, (line) => logger.debug(`MCP server "${this.server}" stderr: ${line}`)),
      isLive: false,
      isOver: false,
      hasLoggedJunk: false,
    }
    this.connection = connection
    const { client } = connection
    client.onerror = (error) => {
      connection.lastError = thrownMessage(error)
      // junk on stdout: the SDK's line parser fails; the line is dropped and reading goes on
      if (!connection.hasLoggedJunk && isParseError(error)) {
        connection.hasLoggedJunk = true
        logger.warn(logLines.junk(this.server, thrownMessage(error)))
      }
    }
    client.onclose = () => this.lost(connection)
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.relist())
    try {
      const connecting = client.connect(connection.opened.transport, { timeout: this.options.startTimeout })
      // spawned by now: the SDK forgets the process as soon as it starts closing it
      this.track(connection)
      await connecting
      if (connection.isOver || this.isClosed) return await this.closeConnection(connection)
      const listed = await this.list(connection)
      if (connection.isOver || this.isClosed) return await this.closeConnection(connection)
      connection.isLive = true
      this.failures = 0
      this.install(listed)
      logger.info(logLines.connected(this.server, this.registered.length))
    } catch (error) {
      if (connection.isOver || this.isClosed) return await this.closeConnection(connection)
      connection.isOver = true
      this.failures++
      const delay = this.nextDelay()
      logger.warn(logLines.startFailed(this.server, this.why(connection, error), delay))
      this.shut(connection)
      this.schedule(delay)
    }
  }

  /** Remembers the connection's process so `close` can make sure it exits. */
  private track(connection: Connection): void {
    connection.pid = connection.opened.pid()
    if (connection.pid !== undefined) this.pids.add(connection.pid)
  }

  private nextDelay(): number {
    return reconnectDelay(this.failures, this.options.reconnectDelay, this.options.maxReconnectDelay)
  }

  private why(connection: Connection, error?: unknown): string {
    let why: string
    if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
      why = `no answer within ${this.options.startTimeout} ms`
    } else if (error instanceof McpError && error.code === ErrorCode.ConnectionClosed) {
      why = isStdio(this.config) ? 'its process exited' : 'the connection closed'
    } else if (error !== undefined) {
      why = described(error)
    } else {
      why = isStdio(this.config) ? 'its process exited' : connection.lastError ? `the connection closed (${connection.lastError})` : 'the connection closed'
    }
    const words = connection.opened.stderr?.lastWords()
    return words ? `${why} (stderr: ${JSON.stringify(words)})` : why
  }

  /** The transport closed: remove the tools, log once, reconnect later. */
  private lost(connection: Connection): void {
    if (connection.isOver || this.isClosed || this.connection !== connection) {
      connection.isOver = true
      return
    }
    // a close before the connection went live fails the attempt under way, which reports it
    if (!connection.isLive) return
    connection.isOver = true
    this.uninstall()
    this.failures++
    const delay = this.nextDelay()
    this.options.logger.warn(logLines.stopped(this.server, this.why(connection), delay))
    this.shut(connection)
    this.schedule(delay)
  }

  private schedule(delay: number): void {
    if (this.isClosed) return
    this.timer = setTimeout(() => {
      this.timer = undefined
      void this.attempt()
    }, delay)
    this.timer.unref?.()
  }

  /** Closes `connection`'s client in the background; `close()` awaits what is still closing. */
  private shut(connection: Connection): void {
    const done = this.closeConnection(connection).finally(() => this.closing.delete(done))
    this.closing.add(done)
  }

  private async closeConnection(connection: Connection): Promise<void> {
    connection.isOver = true
    const pid = connection.pid ?? connection.opened.pid()
    try {
      await connection.client.close()
    } catch {
      // already closed
    }
    if (pid !== undefined) {
      await ensureExited(pid)
      this.pids.delete(pid)
    }
  }

  /** Every page of the server's tool list, at most `MAX_TOOLS_PER_SERVER + 1` tools. */
  private async list(connection: Connection): Promise<unknown[]> {
    const tools: unknown[] = []
    let cursor: string | undefined
    for (let page = 0; page < MAX_LIST_PAGES && tools.length <= MAX_TOOLS_PER_SERVER; page++) {
      // the loose result schema: one malformed tool must not cost the server its other tools
      const result = await connection.client.request(
        { method: 'tools/list', params: cursor === undefined ? {} : { cursor } },
        ResultSchema,
        { timeout: this.options.startTimeout },
      )
      const listed = (result as { tools?: unknown }).tools
      if (!Array.isArray(listed)) throw new McpCallError('MCP_FAILED', this.server, 'its tools/list answer has no "tools" list')
      tools.push(...listed)
      const next = (result as { nextCursor?: unknown }).nextCursor
      if (typeof next !== 'string' || next === '') break
      cursor = next
    }
    return tools
  }

  /** `notifications/tools/list_changed`: lists again and re-registers (one listing at a time). */
  private relist(): void {
    const connection = this.connection
    if (!connection?.isLive || connection.isOver || this.isClosed) return
    if (this.listing) {
      this.isRelistWanted = true
      return
    }
    this.listing = (async () => {
      do {
        this.isRelistWanted = false
        try {
          const listed = await this.list(connection)
          if (connection.isOver || this.isClosed || !connection.isLive) return
          this.install(listed)
        } catch (error) {
          if (connection.isOver || this.isClosed) return
          this.options.logger.warn(logLines.listFailed(this.server, thrownMessage(error)))
        }
      } while (this.isRelistWanted)
    })().finally(() => {
      this.listing = undefined
    })
  }

  /** Replaces the registered tools with those of `listed` that the host can use. */
  private install(listed: readonly unknown[]): void {
    const { logger } = this.options
    const listing = sortListing(this.server, listed)
    const skipped = [...listing.skipped]
    this.uninstall()
    for (const tool of listing.tools) {
      try {
        this.removers.push(this.options.register(this.definition(tool)))
        this.registered.push(tool)
      } catch (error) {
        skipped.push(`${JSON.stringify(tool.serverName)}: ${thrownMessage(error)}`)
      }
    }
    if (listing.cut > 0) logger.warn(logLines.cut(this.server, listed.length, MAX_TOOLS_PER_SERVER))
    if (skipped.length) logger.warn(logLines.skipped(this.server, skipped))
  }

  private uninstall(): void {
    for (const remove of this.removers.splice(0)) remove()
    this.registered = []
  }

  private definition(tool: ListedTool): ToolDefinition {
    return {
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      concurrent: true,
      readOnly: tool.readOnly,
      execute: (args: unknown, exec: ToolExecution) => this.call(tool, args, exec),
    }
  }

  /**
   * Calls the tool with the execution's signal: an abort cancels the request on the server
   * (`notifications/cancelled`). Resolves with the tool's result; throws a `McpCallError` for a
   * result with `isError` (`TOOL_FAILED`), a call past `timeout` (`MCP_TIMEOUT`) and any failure
   * to get an answer (`MCP_FAILED`).
   */
  async call(tool: ListedTool, args: unknown, exec: ToolExecution): Promise<ToolResult> {
    const connection = this.connection
    if (!connection?.isLive || connection.isOver) throw new McpCallError('MCP_FAILED', this.server, callMessages.notConnected(this.server))
    // a signal of our own: the SDK leaves its abort listener on the signal it is given
    const controller = new AbortController()
    const onAbort = () => controller.abort(exec.signal.reason)
    if (exec.signal.aborted) onAbort()
    else exec.signal.addEventListener('abort', onAbort, { once: true })
    try {
      const result = await connection.client.callTool(
        { name: tool.serverName, arguments: args as Record<string, unknown> },
        undefined,
        { signal: controller.signal, timeout: this.options.timeout },
      )
      return this.toResult(callOutcome(result))
    } catch (error) {
      throw this.callError(connection, error, controller.signal.aborted)
    } finally {
      exec.signal.removeEventListener('abort', onAbort)
    }
  }

  private toResult(outcome: ReturnType<typeof callOutcome>): ToolResult {
    const text = outcome.content.map((block) => block.text).join('\n')
    if (outcome.isError) throw new McpCallError('TOOL_FAILED', this.server, text || callMessages.toolError(this.server))
    if (outcome.value === undefined) return { isError: false, content: outcome.content }
    const content = outcome.content.length ? outcome.content : [{ type: 'text' as const, text: JSON.stringify(outcome.value) }]
    return { isError: false, content, value: outcome.value }
  }

  private callError(connection: Connection, error: unknown, isAborted: boolean): McpCallError {
    if (error instanceof McpCallError) return error
    if (isAborted) return new McpCallError('MCP_FAILED', this.server, callMessages.cancelled(this.server), { cause: error })
    if (error instanceof McpError) {
      if (error.code === ErrorCode.RequestTimeout) {
        return new McpCallError('MCP_TIMEOUT', this.server, timeoutMessage(this.server, this.options.timeout), { cause: error })
      }
      if (error.code === ErrorCode.ConnectionClosed || connection.isOver) {
        return new McpCallError('MCP_FAILED', this.server, callMessages.closed(this.server), { cause: error })
      }
      return new McpCallError('MCP_FAILED', this.server, callMessages.failed(this.server, error.message), { cause: error })
    }
    if (connection.isOver) return new McpCallError('MCP_FAILED', this.server, callMessages.closed(this.server), { cause: error })
    if (!isStdio(this.config) && error instanceof TypeError) {
      // fetch failed: an HTTP server is only found gone when asked
      connection.lastError = described(error)
      connection.client.close().catch(() => {})
      return new McpCallError('MCP_FAILED', this.server, callMessages.unreachable(this.server, described(error)), { cause: error })
    }
    return new McpCallError('MCP_FAILED', this.server, callMessages.failed(this.server, thrownMessage(error)), { cause: error })
  }

  /**
   * Ends the link: no more attempts, the tools removed, the connection closed. Resolves once every
   * process this link started has exited (killed after a grace period if it would not).
   */
  async close(): Promise<void> {
    this.isClosed = true
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
    this.uninstall()
    const connection = this.connection
    this.connection = undefined
    if (connection) this.shut(connection)
    await this.attempting
    await Promise.all([...this.closing])
    await Promise.all([...this.pids].map((pid) => ensureExited(pid)))
    this.pids.clear()
  }
}
