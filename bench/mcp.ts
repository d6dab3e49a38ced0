/**
 * What an MCP tool call costs through the host beside the bare SDK client: the round trip of the
 * stdio fixture server's `echo` tool called as `mcp__fx__echo` through `ctx.tools.execute` (argument
 * validation, hooks, result mapping) and called directly with the SDK client's `callTool`, each on
 * its own server process of the same code, alternating call by call in one run so both see the
 * same machine load. Prints one JSON line: p50/p95 of each (µs) and the ratios.
 * Run: `npm run bench:mcp` (`--quick` scales the counts down for smoke runs).
 */
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { Context } from 'cordis'
import { Host } from '../plugins/host/index.ts'
import McpTools from '../plugins/mcp-tools/index.ts'
import { printSummary, runBenchmark } from './report.ts'
import { percentile } from './stats.ts'

const quick = process.argv.includes('--quick')
const warmup = quick ? 20 : 200
const count = quick ? 200 : 2000
const log = (message: string) => process.stderr.write(`${message}\n`)
const server = {
  command: process.execPath,
  args: ['--import', 'tsx', fileURLToPath(new URL('../test/fixtures/mcp/stdio-server.ts', import.meta.url))],
  cwd: fileURLToPath(new URL('..', import.meta.url)),
}

/** Percentile p of sorted samples, as BENCH.md defines it. */

async function main(): Promise<void> {
  const started = performance.now()
  const root = new Context()
  await root.plugin(Host)
  const fiber = root.plugin(McpTools, { servers: { fx: server } } as Partial<McpTools.Config> as McpTools.Config)
  await fiber
  await root.mcpTools.ready()
  if (!root.tools.get('mcp__fx__echo')) throw new Error('the fixture server did not connect')
  const client = new Client({ name: 'bench', version: '1' })
  await client.connect(new StdioClientTransport({ ...server, stderr: 'pipe' }))

  const viaHost = async () => {
    const result = await root.tools.execute({ name: 'mcp__fx__echo', arguments: { text: 'ping' } })
    if (result.isError) throw new Error(`the host call failed: ${JSON.stringify(result)}`)
  }
  const direct = async () => {
    const result = await client.callTool({ name: 'echo', arguments: { text: 'ping' } })
    if (result.isError) throw new Error('the direct call failed')
  }

  log('bench: warm-up')
  for (let i = 0; i < warmup; i++) {
    await viaHost()
    await direct()
  }
  log(`bench: ${count} calls each, alternating`)
  const host: number[] = []
  const bare: number[] = []
  for (let i = 0; i < count; i++) {
    // alternate which goes first, so neither always follows the other
    const order = i % 2 === 0 ? [viaHost, direct] : [direct, viaHost]
    for (const body of order) {
      const t0 = performance.now()
      await body()
      ;(body === viaHost ? host : bare).push((performance.now() - t0) * 1000)
    }
  }
  await client.close()
  await fiber.dispose()
  host.sort((a, b) => a - b)
  bare.sort((a, b) => a - b)
  const round = (value: number) => Math.round(value * 10) / 10
  const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100
  printSummary(
    {
      host_call_p50_us: round(percentile(host, 50)),
      host_call_p95_us: round(percentile(host, 95)),
      sdk_call_p50_us: round(percentile(bare, 50)),
      sdk_call_p95_us: round(percentile(bare, 95)),
      ratio_p50: ratio(percentile(host, 50), percentile(bare, 50)),
      ratio_p95: ratio(percentile(host, 95), percentile(bare, 95)),
    },
    started,
    quick,
  )
}

runBenchmark(main)
