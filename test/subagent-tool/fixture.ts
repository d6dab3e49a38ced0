/**
 * A scene with the driver and `SubagentTool` (optionally `DepthPolicy` and `StructuredOutput`), a
 * parent agent on the scripted model, and a helper that runs one parent turn delegating through
 * the `subagent` tool. The scene's close also checks that the script was used up.
 */
import { expect } from 'chai'
import type { Agent, AgentHandle, AgentOptions, ToolResult } from '../../lib/types.ts'
import DepthPolicy from '../../plugins/depth-policy/index.ts'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import type { ScriptEntry } from '../../plugins/scripted-model/index.ts'
import StructuredOutput from '../../plugins/structured-output/index.ts'
import SubagentTool from '../../plugins/subagent-tool/index.ts'
import { type Scene, type ScenePlugin, scene } from '../support/scene.ts'

export { textOf } from '../support/scene.ts'

export interface FixtureOptions {
  parent?: AgentOptions
  tool?: SubagentTool.Config
  depthPolicy?: DepthPolicy.Config
  structuredOutput?: boolean
}

export interface Fixture {
  host: Scene
  parent: Agent
  parentHandle: AgentHandle
  /** Closes the scene now (it closes by itself after the test). */
  close(): Promise<void>
}

export async function createFixture(options: FixtureOptions = {}): Promise<Fixture> {
  const plugins: ScenePlugin[] = [InProcessRun]
  if (options.depthPolicy) plugins.push([DepthPolicy, options.depthPolicy])
  if (options.structuredOutput) plugins.push(StructuredOutput)
  plugins.push([SubagentTool, options.tool ?? {}])
  const host = await scene({ plugins, scriptUsedUp: true })
  const parentHandle = await host.create({ agentOptions: options.parent })
  return { host, parent: parentHandle.agent, parentHandle, close: host.end }
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
