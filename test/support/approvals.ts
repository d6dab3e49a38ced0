/**
 * A host with the real `Approvals` plugin asking before one tool (`deploy`), and a child that
 * calls it: what the answerers' tests (CLI prompt, inspector page) share.
 */
import type { Fiber } from 'cordis'
import type { Agent, ModelRequest, SubagentRun } from '../../lib/types.ts'
import Approvals from '../../plugins/approvals/index.ts'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import type { ScriptedResponse } from '../../plugins/scripted-model/index.ts'
import { createHost, type TestHost } from './harness.ts'

export const ASKED_TOOL = 'deploy'

/** An `Approvals` config: `deploy` asks, everything else runs (`extra` overrides). */
export function askingConfig(extra: Partial<Approvals.Config> = {}): Approvals.Config {
  return { default: 'allow', readOnly: 'allow', rules: [{ tool: ASKED_TOOL, decision: 'ask' }], children: 'route', ...extra }
}

export interface ApprovalHost extends TestHost {
  parent: Agent
  approvalsFiber: Fiber
  /** The arguments of every `deploy` body that ran, in order. */
  deployed: unknown[]
  /**
   * Starts a child labelled `label` that calls `deploy` with each of `calls` (one step, so they
   * run side by side), then answers with the text of the results it got.
   */
  child(label: string, calls: unknown[], options?: { steps?: 'one' | 'each' }): Promise<SubagentRun>
}

/** The last tool results of a request, as `name: text` lines. */
function resultsText(request: ModelRequest): string {
  return request.messages
    .filter((message) => message.role === 'tool')
    .map((message) => (message.role === 'tool' ? message.content.map((block) => ('text' in block ? block.text : '')).join('') : ''))
    .join('\n')
}

/**
 * The host: `Host`, `ScriptedModel`, `InProcessRun`, `Approvals` (`deploy` asks, everything
 * else runs), the `deploy` tool and a root agent. The scripted model answers each child by its
 * label, so children running side by side get their own script.
 */
export async function createApprovalHost(config: Partial<Approvals.Config> = {}): Promise<ApprovalHost> {
  const host = await createHost()
  await host.root.plugin(InProcessRun)
  const approvalsFiber = host.root.plugin(Approvals, askingConfig(config))
  await approvalsFiber
  const deployed: unknown[] = []
  host.root.tools.register({
    name: ASKED_TOOL,
    description: 'Deploy a build to an environment.',
    // calls of one step run side by side (SPEC §8.1), so their requests are asked at once
    concurrent: true,
    parameters: { type: 'object', properties: { target: { type: 'string' }, note: { type: 'string' } }, required: ['target'] },
    execute: (args) => {
      deployed.push(args)
      return { isError: false, content: [{ type: 'text', text: `deployed to ${(args as { target: string }).target}` }] }
    },
  })
  const parent = await host.agent()
  const scripts = new Map<string, (request: ModelRequest) => ScriptedResponse>()
  host.scripted.repeat((request) => {
    const label = request.agent.session.header.label ?? ''
    const script = scripts.get(label)
    if (!script) return { text: 'nothing to do' }
    return script(request)
  })
  return {
    ...host,
    parent,
    approvalsFiber,
    deployed,
    child(label, calls, { steps = 'one' } = {}) {
      scripts.set(label, (request) => {
        const done = request.messages.filter((message) => message.role === 'tool').length
        if (steps === 'one' && done === 0) return { toolCalls: calls.map((args) => ({ name: ASKED_TOOL, arguments: args })) }
        if (steps === 'each' && done < calls.length) return { toolCalls: [{ name: ASKED_TOOL, arguments: calls[done] }] }
        return { text: resultsText(request) }
      })
      return host.root.inprocessRun.spawn({ parent, prompt: `Ship the ${label} build to production.`, label, signal: new AbortController().signal })
    },
  }
}
