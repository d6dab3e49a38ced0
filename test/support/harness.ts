/**
 * Test host: a root context with `Host` and `ScriptedModel`, plus baseline counters for leak
 * checks (agents, sessions, listeners, live fibers).
 */
import { Context } from 'cordis'
import { Host } from '../../plugins/host/index.ts'
import { ScriptedModel } from '../../plugins/scripted-model/index.ts'
import type { Agent, AgentOptions, CreateAgentOptions } from '../../lib/types.ts'

export interface Snapshot {
  agents: number
  sessions: number
  listeners: number
  fibers: number
}

function countListeners(root: Context): number {
  const hooks = (root.events as unknown as { _hooks: Record<string, unknown[]> })._hooks
  let total = 0
  for (const name of Object.keys(hooks)) total += hooks[name].length
  return total
}

function countFibers(root: Context): number {
  let total = 0
  for (const runtime of root.registry.values()) total += runtime.fibers.length
  return total
}

export interface TestHost {
  root: Context
  scripted: ScriptedModel
  /** A published agent on the scripted model (provider `scripted`, model `test`). */
  agent(options?: AgentOptions, extra?: CreateAgentOptions): Promise<Agent>
  snapshot(): Snapshot
  /** Errors and warnings the host logged. */
  logged(): string[]
}

export async function createHost(config: { maxSteps?: number } = {}): Promise<TestHost> {
  const root = new Context()
  await root.plugin(Host, config as Host.Config)
  await root.plugin(ScriptedModel, {} as ScriptedModel.Config)
  const scripted = root.scripted
  return {
    root,
    scripted,
    async agent(options = {}, extra = {}) {
      const handle = await root.agents.create({ ...extra, agentOptions: { provider: 'scripted', model: 'test', ...options } })
      return handle.agent
    },
    snapshot() {
      return {
        agents: root.agents.list().length,
        sessions: root.sessions.list().length,
        listeners: countListeners(root),
        fibers: countFibers(root),
      }
    },
    logged() {
      return root.logger.buffer.filter((m) => m.type === 'warn' || m.type === 'error').map((m) => m.args.map(String).join(' '))
    },
  }
}

/** Text of every event of the given type in the agent's session. */
export function eventsOf(agent: Agent, type: string): unknown[] {
  return agent.session.events.filter((event) => event.type === type).map((event) => event.data)
}
