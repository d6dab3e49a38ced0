/**
 * A host with `CodeMode` and a few global tools for programs to call, the host invariants
 * installed, and a published agent on the scripted model.
 */
import { expect } from 'chai'
import type { Context } from 'cordis'
import type { Agent, AgentHandle, ToolExecution, ToolResult } from '../../lib/types.ts'
import CodeMode from '../../plugins/code-mode/index.ts'
import { createHost, type Snapshot, type TestHost } from '../support/harness.ts'
import { installInvariants } from '../support/invariants.ts'
import '../support/unhandled.ts'

const objectSchema = { type: 'object' }

/** Global tools: `search` returns data, `plain` only text content, `fail` throws. */
function registerTools(ctx: Context): void {
  ctx.tools.register({
    name: 'search',
    description: 'Finds pages.',
    parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'], additionalProperties: false },
    execute: (args: { q: string }) => ({ hits: [`${args.q}-1`, `${args.q}-2`] }),
  })
  ctx.tools.register({
    name: 'plain',
    description: 'Answers in text.',
    parameters: objectSchema,
    execute: (): ToolResult => ({ isError: false, content: [{ type: 'text', text: 'line one' }, { type: 'text', text: 'line two' }] }),
  })
  ctx.tools.register({
    name: 'fail',
    description: 'Always fails.',
    parameters: objectSchema,
    execute: () => {
      throw new Error('the index is offline')
    },
  })
}
registerTools.inject = ['tools']

export interface Fixture {
  host: TestHost
  agent: Agent
  /** Every `tools/result` so far, in order. */
  results: { exec: ToolExecution; result: ToolResult }[]
  /** Runs `run_code` for the agent through the host, as a tool call of the agent would. */
  runCode(code: string, signal?: AbortSignal): Promise<ToolResult>
  /**
   * Disposes the agent, then checks the invariants and that the host is back at its baseline, then
   * unloads `CodeMode` (its sandbox workers go with it).
   */
  close(): Promise<void>
}

export async function createFixture(config?: Partial<CodeMode.Config>): Promise<Fixture> {
  const host = await createHost()
  await host.root.plugin(registerTools)
  const codeMode = host.root.plugin(CodeMode, config as CodeMode.Config)
  await codeMode
  const invariants = installInvariants(host.root)
  const results: Fixture['results'] = []
  const off = host.root.on('tools/result', (exec, result) => {
    results.push({ exec, result })
  })
  const baseline: Snapshot = host.snapshot()
  const handle: AgentHandle = await host.root.agents.create({ agentOptions: { provider: 'scripted', model: 'test' } })
  return {
    host,
    agent: handle.agent,
    results,
    runCode: (code, signal) => host.root.tools.execute({ name: 'run_code', arguments: { code }, agent: handle.agent, signal }),
    async close() {
      await handle.dispose()
      invariants.check()
      expect(host.scripted.pending, 'unused script entries').to.equal(0)
      expect(host.snapshot()).to.deep.equal(baseline)
      off()
      invariants.dispose()
      await codeMode.dispose()
    },
  }
}

/** The text of a result that has exactly one text block. */
export function textOf(result: ToolResult): string {
  expect(result.content).to.have.length(1)
  const block = result.content[0]!
  expect(block.type).to.equal('text')
  return (block as { text: string }).text
}
