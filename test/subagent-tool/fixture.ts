/**
 * A host with the driver and `SubagentTool`, the host invariants installed, a parent agent on the
 * scripted model, and a helper that runs one parent turn delegating through the `subagent` tool.
 */
import { existsSync } from 'node:fs'
import type { Plugin } from 'cordis'
import { expect } from 'chai'
import type { Agent, AgentHandle, AgentOptions, ToolResult } from '../../lib/types.ts'
import DepthPolicy from '../../plugins/depth-policy/index.ts'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import type { ScriptEntry } from '../../plugins/scripted-model/index.ts'
import SubagentTool from '../../plugins/subagent-tool/index.ts'
import { createHost, type Snapshot, type TestHost } from '../support/harness.ts'
import { installInvariants } from '../support/invariants.ts'
import '../support/unhandled.ts'

const structuredOutputUrl = new URL('../../plugins/structured-output/index.ts', import.meta.url)

/** True once the `StructuredOutput` plugin exists in this checkout. */
export const hasStructuredOutput = existsSync(structuredOutputUrl)

export interface FixtureOptions {
  parent?: AgentOptions
  tool?: SubagentTool.Config
  depthPolicy?: DepthPolicy.Config
  structuredOutput?: boolean
}

export interface Fixture {
  host: TestHost
  parent: Agent
  /**
   * Disposes the parent, then checks the invariants held, the script was used up and the host is
   * back at its baseline (taken before the parent existed).
   */
  close(): Promise<void>
}

export async function createFixture(options: FixtureOptions = {}): Promise<Fixture> {
  const host = await createHost()
  await host.root.plugin(InProcessRun)
  if (options.depthPolicy) await host.root.plugin(DepthPolicy, options.depthPolicy)
  if (options.structuredOutput) {
    const module = (await import(structuredOutputUrl.href)) as { default: Plugin }
    await host.root.plugin(module.default)
  }
  await host.root.plugin(SubagentTool, (options.tool ?? {}) as SubagentTool.Config)
  const invariants = installInvariants(host.root)
  const baseline: Snapshot = host.snapshot()
  const handle: AgentHandle = await host.root.agents.create({
    agentOptions: { provider: 'scripted', model: 'test', ...options.parent },
  })
  return {
    host,
    parent: handle.agent,
    async close() {
      await handle.dispose()
      invariants.check()
      expect(host.scripted.pending, 'unused script entries').to.equal(0)
      expect(host.snapshot()).to.deep.equal(baseline)
      invariants.dispose()
    },
  }
}

export interface Delegation {
  /** The final result of the parent's `subagent` call, as `tools/result` saw it. */
  result: ToolResult
  /** Ids of the live agents when that result was emitted. */
  agentsAtResult: string[]
}

/**
 * One parent turn: the parent model calls `subagent` with `args` (call id `call_sub`), the child
 * answers with `child` (in order), then the parent ends with `parent done`.
 */
export async function delegate(fixture: Fixture, args: unknown, ...child: ScriptEntry[]): Promise<Delegation> {
  const { host, parent } = fixture
  let delegation: Delegation | undefined
  const off = parent.ctx.on('tools/result', (exec, result) => {
    if (exec.name !== 'subagent') return
    delegation = { result, agentsAtResult: host.root.agents.list().map((agent) => agent.id) }
  })
  host.scripted.push({ toolCalls: [{ id: 'call_sub', name: 'subagent', arguments: args }] }, ...child, { text: 'parent done' })
  parent.followup('delegate please')
  await parent.whenIdle()
  off()
  expect(delegation, 'the subagent call produced no result').to.not.equal(undefined)
  return delegation!
}

/** The text of a result that has exactly one text block. */
export function textOf(result: ToolResult): string {
  expect(result.content).to.have.length(1)
  const block = result.content[0]!
  expect(block.type).to.equal('text')
  return (block as { text: string }).text
}
