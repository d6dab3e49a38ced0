/**
 * A host with the driver and `TreeBudget` (optionally `DepthPolicy` and `SubagentTool`), the host
 * invariants installed, a root agent on the scripted model, and a leak check at the end.
 */
import { expect } from 'chai'
import type { Fiber } from 'cordis'
import type { Agent, AgentHandle, SubagentStartRequest, Usage } from '../../lib/types.ts'
import DepthPolicy from '../../plugins/depth-policy/index.ts'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import SubagentTool from '../../plugins/subagent-tool/index.ts'
import TreeBudget from '../../plugins/tree-budget/index.ts'
import { createHost, type Snapshot, type TestHost } from '../support/harness.ts'
import { installInvariants } from '../support/invariants.ts'
import '../support/unhandled.ts'

export interface BudgetFixtureOptions {
  budget?: TreeBudget.Config
  depthPolicy?: DepthPolicy.Config
  subagentTool?: SubagentTool.Config
}

export interface BudgetFixture {
  host: TestHost
  root: Agent
  budget: TreeBudget
  fiber: Fiber
  /** A start request under `parent` (default: the root) with a fresh signal. */
  request(extra?: Partial<SubagentStartRequest>): SubagentStartRequest
  /** Disposes the root, then checks invariants, the script and the host baseline. */
  close(): Promise<void>
}

export async function createBudgetFixture(options: BudgetFixtureOptions = {}): Promise<BudgetFixture> {
  const host = await createHost()
  await host.root.plugin(InProcessRun)
  if (options.depthPolicy) await host.root.plugin(DepthPolicy, options.depthPolicy)
  const fiber = host.root.plugin(TreeBudget, options.budget ?? {})
  await fiber
  if (options.subagentTool) await host.root.plugin(SubagentTool, options.subagentTool)
  const invariants = installInvariants(host.root)
  const baseline: Snapshot = host.snapshot()
  const handle: AgentHandle = await host.root.agents.create({ agentOptions: { provider: 'scripted', model: 'test' } })
  const root = handle.agent
  return {
    host,
    root,
    fiber,
    budget: host.root.treeBudget,
    request: (extra = {}) => ({ parent: root, prompt: 'do the task', signal: new AbortController().signal, ...extra }),
    async close() {
      await handle.dispose()
      invariants.check()
      expect(host.scripted.pending, 'unused script entries').to.equal(0)
      expect(host.snapshot()).to.deep.equal(baseline)
      invariants.dispose()
    },
  }
}

export function usage(inputTokens: number, outputTokens: number): Usage {
  return { inputTokens, outputTokens }
}
