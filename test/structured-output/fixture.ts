/**
 * A host with the driver and `StructuredOutput`, the host invariants installed, and a parent agent
 * on the scripted model. `close()` disposes the parent and checks the invariants, the script and
 * the leak baseline (taken before the parent existed).
 */
import { expect } from 'chai'
import type { Fiber } from 'cordis'
import type { Agent, AgentHandle, JsonSchema, SessionEventData, SubagentStartRequest } from '../../lib/types.ts'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import StructuredOutput from '../../plugins/structured-output/index.ts'
import { createHost, type TestHost } from '../support/harness.ts'
import { installInvariants } from '../support/invariants.ts'
import '../support/unhandled.ts'

const answerSchema: JsonSchema = {
  type: 'object',
  properties: { answer: { type: 'integer' } },
  required: ['answer'],
  additionalProperties: false,
}

export interface Fixture {
  host: TestHost
  parent: Agent
  /** Unloads `StructuredOutput`; the leak baseline becomes the host without it. */
  unload(): Promise<void>
  /** Loads `StructuredOutput` again after `unload()` (a hot reload when done mid-run). */
  reload(): Promise<void>
  /** A spawn request from the parent with `answerSchema` unless `extra` says otherwise. */
  request(extra?: Partial<SubagentStartRequest>): SubagentStartRequest
  /** Disposes the parent, then checks invariants, the used-up script and the leak baseline. */
  close(): Promise<void>
}

export async function createFixture(options: { plugin?: boolean } = {}): Promise<Fixture> {
  const host = await createHost()
  await host.root.plugin(InProcessRun)
  const invariants = installInvariants(host.root)
  const bare = host.snapshot()
  let plugin: Fiber | undefined = options.plugin === false ? undefined : host.root.plugin(StructuredOutput)
  await plugin
  const baseline = host.snapshot()
  const handle: AgentHandle = await host.root.agents.create({ agentOptions: { provider: 'scripted', model: 'test' } })
  const parent = handle.agent
  return {
    host,
    parent,
    async unload() {
      await plugin?.dispose()
      plugin = undefined
    },
    async reload() {
      plugin = host.root.plugin(StructuredOutput)
      await plugin
    },
    request: (extra = {}) => ({
      parent,
      prompt: 'answer the question',
      signal: new AbortController().signal,
      outputSchema: answerSchema,
      ...extra,
    }),
    async close() {
      await handle.dispose()
      invariants.check()
      expect(host.scripted.pending, 'unused script entries').to.equal(0)
      expect(host.snapshot()).to.deep.equal(plugin ? baseline : bare)
      invariants.dispose()
    },
  }
}

/** The `tool/result` events the child's loop recorded, in order. */
export function toolResults(agent: Agent): SessionEventData['tool/result'][] {
  return agent.session.events
    .filter((event) => event.type === 'tool/result')
    .map((event) => event.data as SessionEventData['tool/result'])
}

/** The number of user messages in the child's session (the prompt, plus any nudge). */
export function userMessages(agent: Agent): number {
  return agent.session.events.filter((event) => event.type === 'user/message').length
}

/** A tool call entry for the scripted model. */
export function call(name: string, args: unknown, id?: string): { id?: string; name: string; arguments: unknown } {
  return id === undefined ? { name, arguments: args } : { id, name, arguments: args }
}
