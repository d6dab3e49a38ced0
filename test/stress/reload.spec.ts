/**
 * Hot reload under load, part of `npm run test:stress`: thousands of structured runs held
 * live inside the model while `StructuredOutput` is restarted every way a deployment restarts it
 * (a config update, an unload and load, a restart as a dependent of a reloaded `InProcessRun`).
 * Every run must still settle with its own value, the settle listeners must not grow with the
 * number of live runs, and afterwards listeners and fibers are back at baseline. Set
 * RELOAD_RUNS=<n> to change the number of runs.
 */
import { expect } from 'chai'
import { Context, type Fiber } from 'cordis'
import type { AgentHandle, ModelRequest, StreamPart, SubagentRun } from '../../lib/types.ts'
import { Host } from '../../plugins/host/index.ts'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import { ScriptedModel } from '../../plugins/scripted-model/index.ts'
import StructuredOutput from '../../plugins/structured-output/index.ts'
import '../support/unhandled.ts'

const RUNS = Number(process.env.RELOAD_RUNS ?? 3_000)

const schema = {
  type: 'object',
  properties: { answer: { type: 'integer' } },
  required: ['answer'],
  additionalProperties: false,
} as const

function hooksOf(root: Context): Record<string, unknown[] | undefined> {
  return (root.events as unknown as { _hooks: Record<string, unknown[] | undefined> })._hooks
}

function count(root: Context): { listeners: number; fibers: number } {
  const hooks = hooksOf(root)
  let listeners = 0
  for (const name of Object.keys(hooks)) listeners += hooks[name]?.length ?? 0
  let fibers = 0
  for (const runtime of root.registry.values()) fibers += runtime.fibers.length
  return { listeners, fibers }
}

describe('reload: restarting StructuredOutput under thousands of live structured runs', function () {
  this.timeout(600_000)

  it('settles every run with its own value through every kind of restart', async () => {
    const root = new Context()
    await root.plugin(Host, { maxSteps: 8 })
    await root.plugin(ScriptedModel, { provider: 'scripted', record: false })
    let driver: Fiber = root.plugin(InProcessRun)
    await driver
    const parent: AgentHandle = await root.agents.create({ agentOptions: { provider: 'scripted', model: 'test' } })
    const bare = count(root)
    const structured = root.plugin(StructuredOutput, {})
    await structured

    let waiting = 0
    let allWaiting!: () => void
    const reached = new Promise<void>((resolve) => (allWaiting = resolve))
    let open!: () => void
    const opened = new Promise<void>((resolve) => (open = resolve))
    root.models.register('reload', {
      async *stream(request: ModelRequest): AsyncGenerator<StreamPart> {
        if (++waiting === RUNS) allWaiting()
        await opened
        // the prompt carries the run's number, so every run answers with its own value
        const prompt = request.messages[0]?.content[0]
        const answer = Number(prompt?.type === 'text' ? prompt.text.slice('task '.length) : Number.NaN)
        yield { type: 'tool-call', id: 'c1', name: 'structured_output', arguments: JSON.stringify({ answer }) }
        yield { type: 'finish', reason: 'tool-calls', usage: { inputTokens: 1, outputTokens: 1 } }
      },
    })

    const runs: SubagentRun[] = []
    for (let i = 0; i < RUNS; i++) {
      runs.push(
        await root.inprocessRun.spawn({
          parent: parent.agent,
          prompt: `task ${i}`,
          signal: new AbortController().signal,
          agentOptions: { provider: 'reload', model: 'reload-1' },
          outputSchema: schema,
        }),
      )
    }
    await reached

    // a config update restarts the plugin
    structured.update({ locale: 'zh-CN' })
    await structured
    // reloading the driver restarts the plugin as its dependent
    await driver.dispose()
    driver = root.plugin(InProcessRun)
    await driver
    await structured
    // an unload, with the runs still live
    await structured.dispose()
    expect(hooksOf(root)['subagent/settle']?.length, 'settle listeners with every run left behind').to.equal(1)

    open()
    const results = await Promise.all(runs.map((run) => run.result))
    for (let i = 0; i < RUNS; i++) {
      expect(results[i].stopReason, `run ${i}`).to.equal('completed')
      expect(results[i].structured, `run ${i}`).to.deep.equal({ answer: i })
    }
    await Promise.all(runs.map((run) => run.dispose()))
    expect(root.agents.list().length, 'agents after disposing every run').to.equal(1)
    expect(hooksOf(root)['subagent/settle']?.length ?? 0, 'settle listeners after every run settled').to.equal(0)
    expect(count(root), 'listeners and fibers after disposing every run').to.deep.equal(bare)
    await parent.dispose()
  })
})
