/**
 * BENCH.md's cycle (spawn → result → dispose on a scripted model that answers `ok` at once) as a
 * reusable function, for the benchmarks that count or place its costs rather than report the
 * BENCH.md figures (bench/cycle-gc.ts, bench/window.ts). bench/spawn.ts keeps its own copy: its
 * variants and phases are the reported ones.
 */
import { InProcessRun } from '../plugins/inprocess-run/index.ts'
import { scriptedHost } from './scripted-host.ts'

export interface CycleOptions {
  /** `TreeBudget` loaded with limits set (so every check runs) and never reached. */
  budget?: boolean
  /** `StructuredOutput` loaded, an output schema on every start, the child answering with one valid capture. */
  structured?: boolean
}

const outputSchema = {
  type: 'object',
  properties: { answer: { type: 'string' } },
  required: ['answer'],
  additionalProperties: false,
}

/**
 * Builds the host once and returns one cycle: spawn a depth-1 child of a parent made here, await
 * its result, dispose it. The cycle rejects when the result is not `completed` with the answer
 * `ok` (or the structured `{answer: 'ok'}`), or when the child is still in `agents` or
 * `sessions` after its disposal.
 */
export async function benchCycle({ budget = false, structured = false }: CycleOptions = {}): Promise<() => Promise<void>> {
  const root = await scriptedHost()
  await root.plugin(InProcessRun)
  if (budget) {
    const { default: TreeBudget } = await import('../plugins/tree-budget/index.ts')
    await root.plugin(TreeBudget, { maxConcurrent: 1e9, maxChildren: 1e12, maxTokens: 1e12, maxModelRequests: 1e12 })
  }
  if (structured) {
    const { default: StructuredOutput } = await import('../plugins/structured-output/index.ts')
    await root.plugin(StructuredOutput)
  }
  const answer = { text: 'ok', usage: { inputTokens: 16, outputTokens: 1 } }
  const capture = { toolCalls: [{ id: 'c1', name: 'structured_output', arguments: '{"answer":"ok"}' }], usage: answer.usage }
  root.scripted.repeat(structured ? (request) => (request.tools?.length ? capture : answer) : answer)
  const { agent: parent } = await root.agents.create({ agentOptions: { provider: 'scripted', model: 'bench' } })
  // services are read once, as a plugin holding them would: in cordis every property read of a
  // service on a context is a lookup that builds a stack-capturing Error, the harness's cost and
  // not the cycle's (about a fifth of the sequential loop's CPU profile)
  const runner = root.inprocessRun
  const { agents, sessions } = root
  let n = 0
  return async () => {
    const label = `task ${++n}`
    const signal = new AbortController().signal
    const run = await runner.spawn(structured ? { parent, prompt: label, label, signal, outputSchema } : { parent, prompt: label, label, signal })
    const result = await run.result
    if (result.stopReason !== 'completed') throw new Error(`cycle ended ${result.stopReason}: ${result.diagnostic}`)
    const first = result.output[0]
    const ok = structured ? (result.structured as { answer?: string } | undefined)?.answer === 'ok' : first?.type === 'text' && first.text === 'ok'
    if (!ok) throw new Error(`unexpected result ${JSON.stringify(result)}`)
    await run.dispose()
    if (agents.get(run.id) || sessions.get(run.id)) throw new Error('child survived dispose')
  }
}
