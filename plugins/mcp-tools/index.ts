/**
 * `McpTools` (SPEC §13): the tools of Model Context Protocol servers as global host tools
 * `mcp__<server>__<tool>`, one connection per server for the plugin's lifetime, on the official
 * `@modelcontextprotocol/sdk` client.
 */
import { dirname } from 'node:path'
import type { Context } from 'cordis'
import Schema from 'schemastery'
import { SERVER_NAME } from '../../lib/mcp/tool-listing.ts'
import { MAX_TIMER_DELAY_MS } from '../../lib/async/timer-delay.ts'
import { localizeConfig } from '../../locales/index.ts'
import type { ToolDefinition } from '../../lib/types.ts'
import type {} from '../host/index.ts'
import type {} from '../loader/index.ts'
import { loadLinkModule } from './sdk-module.ts'
import type { HttpServer, ServerConfig, StdioServer } from './transport.ts'

export { McpCallError, timeoutMessage } from './errors.ts'
export type { HttpServer, ServerConfig, StdioServer } from './transport.ts'
export { MAX_DESCRIPTION_CHARS, MAX_TOOLS_PER_SERVER, mcpToolName } from '../../lib/mcp/tool-listing.ts'

declare module 'cordis' {
  interface Context {
    mcpTools: McpToolsService
  }
}

/** One configured server as it stands now. */
export interface McpServerStatus {
  name: string
  /** True while the server is connected and its tools are registered. */
  connected: boolean
  /** The host names of its registered tools, sorted. */
  tools: string[]
  /** The process id of a connected stdio server. */
  pid?: number
}

/** Service `ctx.mcpTools`. */
export interface McpToolsService {
  /**
   * Resolves once every configured server's first attempt has connected (its tools registered)
   * or failed. Never rejects. A host that starts agents right after loading the plugin awaits it
   * so the agents see the tools of the servers that work.
   */
  ready(): Promise<void>
  /** Every configured server, in config order. */
  servers(): McpServerStatus[]
}

/**
 * Connects to every configured server and registers its tools, each as a global tool with the
 * server's description, its `inputSchema` as parameters, `concurrent: true` and `readOnly` from the
 * `readOnlyHint` annotation. Connecting goes on in the background: `ctx.mcpTools.ready()` says when
 * each server's first attempt is over. The plugin never fails because a server does: a server that
 * fails to start or stops is logged in one line naming it and why, its tools are removed, and it is
 * tried again with backoff, the others unaffected. Unloading, reloading or updating the plugin
 * (even while a server is still starting) closes every connection and waits until every stdio
 * server's process has exited (killed when it would not). A stdio server's relative `cwd` (and its
 * default one) is the folder of the host config file when the loader provides it, else the working
 * folder of the process. Without `@modelcontextprotocol/sdk` the plugin fails to start with a
 * `PeerDependencyError` naming the package.
 */
export async function McpTools(ctx: Context, config: McpTools.Config): Promise<void> {
  const { ServerLink } = await loadLinkModule()
  const logger = ctx.logger('mcp-tools')
  const configFile = ctx.get('hostConfigFile')
  const baseDir = typeof configFile === 'string' ? dirname(configFile) : process.cwd()
  const options = {
    timeout: config.timeout,
    startTimeout: config.startTimeout,
    reconnectDelay: config.reconnectDelay,
    maxReconnectDelay: config.maxReconnectDelay,
    baseDir,
    logger,
    register: (def: ToolDefinition) => ctx.tools.register(def),
  }
  const links = Object.entries(config.servers ?? {}).map(([name, server]) => new ServerLink(name, server, options))
  ctx.effect(
    () => () => Promise.all(links.map((link) => link.close())).then(() => undefined),
    'McpTools connections',
  )
  const firstAttempts = Promise.all(links.map((link) => link.start())).then(() => undefined)
  ctx.provide('mcpTools', {
    ready: () => firstAttempts,
    servers: () =>
      links.map((link) => ({
        name: link.server,
        connected: link.isConnected,
        tools: link.toolNames.sort(),
        ...(link.pid === undefined ? {} : { pid: link.pid }),
      })),
  } satisfies McpToolsService)
}

export namespace McpTools {
  export const inject = ['tools']

  export interface Config {
    /** Server name (`^[A-Za-z0-9_-]+$`) → how to reach it. */
    servers?: Record<string, ServerConfig>
    timeout: number
    startTimeout: number
    reconnectDelay: number
    maxReconnectDelay: number
  }

  const stdio: Schema<StdioServer> = Schema.object({
    command: Schema.string().required(),
    args: Schema.array(Schema.string()),
    env: Schema.dict(Schema.string()),
    cwd: Schema.string(),
  })
  const http: Schema<HttpServer> = Schema.object({
    url: Schema.string().required(),
    headers: Schema.dict(Schema.string()),
  })

  // field descriptions: `config.mcpTools` in locales/*.yml
  export const Config: Schema<Config> = localizeConfig(
    Schema.object({
      servers: Schema.dict(Schema.union([stdio, http]) as Schema<ServerConfig>, Schema.string().pattern(SERVER_NAME)),
      timeout: Schema.natural().min(1).max(MAX_TIMER_DELAY_MS).default(60000),
      startTimeout: Schema.natural().min(1).max(MAX_TIMER_DELAY_MS).default(60000),
      reconnectDelay: Schema.natural().min(1).max(MAX_TIMER_DELAY_MS).default(1000),
      maxReconnectDelay: Schema.natural().min(1).max(MAX_TIMER_DELAY_MS).default(30000),
    }),
    'mcpTools',
  )
}

export default McpTools
