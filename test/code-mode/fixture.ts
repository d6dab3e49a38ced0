/**
 * A scene with `CodeMode` and a few global tools for programs to call, and a published agent on
 * the scripted model; the scene's close also checks that the script was used up.
 */
import type { Context } from 'cordis'
import type { Agent, ToolExecution, ToolResult } from '../../lib/types.ts'
import CodeMode from '../../plugins/code-mode/index.ts'
import { type Scene, scene } from '../support/scene.ts'

export { textOf } from '../support/scene.ts'

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
  host: Scene
  agent: Agent
  /** Every `tools/result` so far, in order. */
  results: { exec: ToolExecution; result: ToolResult }[]
  /** Runs `run_code` for the agent through the host, as a tool call of the agent would. */
  runCode(code: string, signal?: AbortSignal): Promise<ToolResult>
  /** Closes the scene now (it closes by itself after the test; `CodeMode`'s sandbox workers go with it). */
  close(): Promise<void>
}

export async function createFixture(config?: Partial<CodeMode.Config>): Promise<Fixture> {
  const host = await scene({ plugins: [registerTools, [CodeMode, config]], scriptUsedUp: true })
  const results: Fixture['results'] = []
  host.on('tools/result', (exec, result) => {
    results.push({ exec, result })
  })
  const agent = await host.agent()
  return {
    host,
    agent,
    results,
    runCode: (code, signal) => host.root.tools.execute({ name: 'run_code', arguments: { code }, agent, signal }),
    close: host.end,
  }
}
