/**
 * A scene with the driver and `StructuredOutput` and a parent agent on the scripted model; the
 * scene's close also checks that the script was used up, against the baseline of the plugins
 * still loaded (taken before the parent existed).
 */
import type { Agent, JsonSchema, SessionEventData, SubagentStartRequest } from '../../lib/types.ts'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import StructuredOutput from '../../plugins/structured-output/index.ts'
import { type Scene, scene } from '../support/scene.ts'

const answerSchema: JsonSchema = {
  type: 'object',
  properties: { answer: { type: 'integer' } },
  required: ['answer'],
  additionalProperties: false,
}

export interface Fixture {
  host: Scene
  parent: Agent
  /** Unloads `StructuredOutput`; the leak baseline becomes the host without it. */
  unload(): Promise<void>
  /** Loads `StructuredOutput` again after `unload()` (a hot reload when done mid-run). */
  reload(): Promise<void>
  /** A spawn request from the parent with `answerSchema` unless `extra` says otherwise. */
  request(extra?: Partial<SubagentStartRequest>): SubagentStartRequest
  /** Closes the scene now (it closes by itself after the test). */
  close(): Promise<void>
}

export async function createFixture(options: { plugin?: boolean } = {}): Promise<Fixture> {
  const host = await scene({ plugins: options.plugin === false ? [InProcessRun] : [InProcessRun, StructuredOutput], scriptUsedUp: true })
  const [bare, loaded] = [host.snapshots[1]!, host.baseline]
  const parent = await host.agent()
  return {
    host,
    parent,
    async unload() {
      for (const fiber of [...(host.root.registry.get(StructuredOutput)?.fibers ?? [])]) await fiber.dispose()
      host.baseline = bare
    },
    async reload() {
      await host.root.plugin(StructuredOutput)
      host.baseline = loaded
    },
    request: (extra = {}) => ({
      parent,
      prompt: 'answer the question',
      signal: new AbortController().signal,
      outputSchema: answerSchema,
      ...extra,
    }),
    close: host.end,
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
