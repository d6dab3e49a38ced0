/**
 * Approvals test scenes: a host with `InProcessRun`, `Approvals` (with the given config) and tools
 * that record their runs, plus helpers that wait for requests by event, never by time.
 */
import type { Plugin } from 'cordis'
import Approvals from '../../plugins/approvals/index.ts'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import type { ApprovalDecision, ApprovalRequest } from '../../lib/approval/request.ts'
import type { Agent, ContentBlock, SessionEvent, ToolDefinition } from '../../lib/types.ts'
import { type Scene, type ScenePlugin, scene } from '../support/scene.ts'

export interface ApprovalScene extends Scene {
  /** Tool names in the order their bodies ran. */
  readonly ran: string[]
  /** Registers a global tool whose body records its run and returns `<name> ran`. */
  tool(name: string, extra?: Partial<ToolDefinition>): void
  /** Requests in the order `approval/asked` was heard. */
  readonly asked: ApprovalRequest[]
  /** Decisions in the order `approval/decided` was heard. */
  readonly decided: [ApprovalRequest, ApprovalDecision][]
  /**
   * Resolves with the `count`-th request asked (1-based), now or when it comes; by default the one
   * after the last this returned.
   */
  nextAsked(count?: number): Promise<ApprovalRequest>
}

export async function approvalScene(config: Partial<Approvals.Config> = {}, more: readonly ScenePlugin[] = []): Promise<ApprovalScene> {
  const s = await scene({ plugins: [InProcessRun, [Approvals as Plugin, config], ...more] })
  const ran: string[] = []
  const asked: ApprovalRequest[] = []
  const decided: [ApprovalRequest, ApprovalDecision][] = []
  const waiters: { count: number; resolve: (request: ApprovalRequest) => void }[] = []
  let handed = 0
  s.on('approval/asked', (request) => {
    asked.push(request)
    for (const waiter of waiters.filter((w) => w.count === asked.length)) waiter.resolve(request)
  })
  s.on('approval/decided', (request, decision) => void decided.push([request, decision]))
  return Object.assign(s, {
    ran,
    asked,
    decided,
    tool(name: string, extra: Partial<ToolDefinition> = {}) {
      s.root.tools.register({
        name,
        description: `The ${name} tool.`,
        parameters: { type: 'object' },
        execute: () => {
          ran.push(name)
          return `${name} ran`
        },
        ...extra,
      } as ToolDefinition)
    },
    nextAsked(count = handed + 1) {
      handed = Math.max(handed, count)
      if (asked.length >= count) return Promise.resolve(asked[count - 1]!)
      return new Promise<ApprovalRequest>((resolve) => waiters.push({ count, resolve }))
    },
  })
}

/** Scripts one step calling `calls` (each `[name, args]`), then a final text answer. */
export function scriptCalls(s: Scene, calls: [name: string, args?: unknown][], answer = 'done'): void {
  s.scripted.push(
    { toolCalls: calls.map(([name, args], index) => ({ id: `call_${index + 1}`, name, arguments: JSON.stringify(args ?? {}) })) },
    { text: answer },
  )
}

/** The `tool/result` events of the agent's session, as `[name, text]`. */
export function toolResults(agent: Agent): [string, string][] {
  return agent.session.events
    .filter((event) => event.type === 'tool/result')
    .map((event) => {
      const data = event.data as { name: string; content: ContentBlock[] }
      return [data.name, data.content.map((block) => (block.type === 'text' ? block.text : '')).join('')]
    })
}

/** The agent's session events of `type`, their data. */
export function eventsOf(agent: Agent, type: string): unknown[] {
  return agent.session.events.filter((event: SessionEvent) => event.type === type).map((event) => event.data)
}
