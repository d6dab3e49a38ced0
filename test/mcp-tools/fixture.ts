/**
 * A host with `McpTools` against the fixture servers, and what the tests look at: the tools it
 * registered, the log lines it wrote, the server processes still running.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { expect } from 'chai'
import type { Fiber } from 'cordis'
import McpTools, { type StdioServer } from '../../plugins/mcp-tools/index.ts'
import type { FixtureMode } from '../fixtures/mcp/fixture-tools.ts'
import { createHost, type TestHost } from '../support/harness.ts'
import { type Scene, type ScenePlugin, scene } from '../support/scene.ts'

const serverFile = fileURLToPath(new URL('../fixtures/mcp/stdio-server.ts', import.meta.url))
const repoRoot = fileURLToPath(new URL('../../', import.meta.url))

/** The stdio fixture server's config entry, in `mode`. */
export function stdioServer(mode: FixtureMode = 'normal'): StdioServer {
  return { command: process.execPath, args: ['--import', 'tsx', serverFile, mode], cwd: repoRoot }
}

/** Pids of this process's children that run the stdio fixture server. */
export function fixturePids(): number[] {
  const pids: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (ppid !== process.pid) continue
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('stdio-server.ts')) pids.push(Number(entry))
    } catch {
      // exited meanwhile
    }
  }
  return pids
}

export interface McpHost extends Scene {
  /** The McpTools fiber. */
  mcp: Fiber
  /** Names of the global `mcp__` tools registered now. */
  mcpTools(): string[]
  /** Every line McpTools logged, any level except debug. */
  lines(): string[]
}

/**
 * A scene with McpTools loaded with `config` (fast reconnects and a 10 s timeout unless it says
 * otherwise) before `plugins`. Its close also checks that no fixture server process is left.
 */
export async function mcpScene(config: Partial<McpTools.Config>, plugins: readonly ScenePlugin[] = []): Promise<McpHost> {
  const host = await scene({ plugins: [[McpTools, { ...fastConfig, ...config }], ...plugins] })
  await host.root.mcpTools.ready()
  host.defer(() => expect(fixturePids(), 'fixture server processes left running').to.deep.equal([]))
  return Object.assign(host, {
    mcp: host.fibers[0]!,
    mcpTools: () => mcpToolsOf(host),
    lines: () => linesOf(host),
  })
}

/** What the tests use unless they say otherwise. */
export const fastConfig = { reconnectDelay: 50, maxReconnectDelay: 200, timeout: 10_000 }

export function mcpToolsOf(host: TestHost): string[] {
  return host.root.tools
    .schemas()
    .map((schema) => schema.name)
    .filter((name) => name.startsWith('mcp__'))
}

export function linesOf(host: TestHost): string[] {
  return host.root.logger.buffer.filter((m) => m.name === 'mcp-tools' && m.type !== 'debug').map((m) => m.args.map(String).join(' '))
}

/** Resolves once `check` is true (polled every 20 ms), or rejects after `ms`. */
export async function until(check: () => boolean, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

/**
 * A host with McpTools for a whole `describe` (one server start for many read-only tests): open it
 * in `before`, `close()` it in `after` (which checks no fixture server process is left).
 */
export async function sharedMcpHost(config: Partial<McpTools.Config>): Promise<TestHost & { mcp: Fiber; close(): Promise<void> }> {
  const host = await createHost()
  const mcp = host.root.plugin(McpTools, { ...fastConfig, ...config } as McpTools.Config)
  await mcp
  await host.root.mcpTools.ready()
  return Object.assign(host, {
    mcp,
    async close() {
      await host.root.agents.disposeAll()
      await mcp.dispose()
      expect(fixturePids(), 'fixture server processes left running').to.deep.equal([])
    },
  })
}
