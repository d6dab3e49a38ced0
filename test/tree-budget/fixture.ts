/**
 * A scene with the driver and `TreeBudget` (optionally `DepthPolicy` and `SubagentTool`) and a root
 * agent on the scripted model; the scene's close also checks that the script was used up.
 */
import type { Fiber } from 'cordis'
import type { Agent, SubagentStartRequest, Usage } from '../../lib/types.ts'
import DepthPolicy from '../../plugins/depth-policy/index.ts'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import SubagentTool from '../../plugins/subagent-tool/index.ts'
import TreeBudget from '../../plugins/tree-budget/index.ts'
import { type Scene, type ScenePlugin, scene } from '../support/scene.ts'

export interface BudgetFixtureOptions {
  budget?: TreeBudget.Config
  depthPolicy?: DepthPolicy.Config
  subagentTool?: SubagentTool.Config
}

export interface BudgetFixture {
  host: Scene
  root: Agent
  budget: TreeBudget
  fiber: Fiber
  /** A start request under `parent` (default: the root) with a fresh signal. */
  request(extra?: Partial<SubagentStartRequest>): SubagentStartRequest
  /** Closes the scene now (it closes by itself after the test). */
  close(): Promise<void>
}

export async function createBudgetFixture(options: BudgetFixtureOptions = {}): Promise<BudgetFixture> {
  const plugins: ScenePlugin[] = [InProcessRun]
  if (options.depthPolicy) plugins.push([DepthPolicy, options.depthPolicy])
  const budgetAt = plugins.push([TreeBudget, options.budget ?? {}]) - 1
  if (options.subagentTool) plugins.push([SubagentTool, options.subagentTool])
  const host = await scene({ plugins, scriptUsedUp: true })
  const root = await host.agent()
  return {
    host,
    root,
    fiber: host.fibers[budgetAt]!,
    budget: host.root.treeBudget,
    request: (extra = {}) => ({ parent: root, prompt: 'do the task', signal: new AbortController().signal, ...extra }),
    close: host.end,
  }
}

export function usage(inputTokens: number, outputTokens: number): Usage {
  return { inputTokens, outputTokens }
}
