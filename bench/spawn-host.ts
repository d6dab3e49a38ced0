/**
 * The host of `bench/spawn.ts` (../shared/BENCH.md): built once, before anything is timed, with
 * what a variant loads; and the measuring procedures its phases share.
 */
import { Context } from 'cordis'
import type { Agent, SubagentRun, SubagentStartRequest } from '../lib/types.ts'
import { Host } from '../plugins/host/index.ts'
import { InProcessRun } from '../plugins/inprocess-run/index.ts'
import { ScriptedModel } from '../plugins/scripted-model/index.ts'
import { type FullPlugin, fullPluginsAll, loadFullPlugins, unreachable } from './full-host.ts'
import { fullGc } from './heap.ts'
import { loadStore, type StoreKind } from './postgres-variant.ts'
import { median, percentile } from './stats.ts'

export { median, percentile }

export type Variant = 'plain' | 'structured' | 'budget' | 'tracing' | 'inspector' | 'approvals' | 'postgres' | 'full'

export { unreachable }

/** What a benchmark host loads beyond the driver. */
export interface HostOptions {
  /** TreeBudget with these limits; `null` = not loaded. */
  budget: Record<string, number> | null
  /** The variant's observer plugin (`Tracing` without a provider, `Inspector`, `Approvals`). */
  observer: boolean
  /** StructuredOutput loaded and an output schema on every start. */
  structured?: boolean
  /** A session store loaded (the postgres variant): every cycle's child is written. */
  store?: StoreKind
  /** The production host of the `full` variant: these plugins of it (default: none). */
  full?: readonly FullPlugin[]
}

/** The options a variant's hosts get unless a phase asks otherwise. */
export function variantOptions(variant: Variant): HostOptions {
  return {
    budget: variant === 'budget' ? unreachable : null,
    observer: variant === 'tracing' || variant === 'inspector' || variant === 'approvals',
    structured: variant === 'structured',
    ...(variant === 'full' ? { full: fullPluginsAll } : {}),
  }
}

const outputSchema = {
  type: 'object',
  properties: { answer: { type: 'string' } },
  required: ['answer'],
  additionalProperties: false,
}

/** A host ready to cycle; `quiesce()` is what a phase runs outside its timed windows. */
export interface Bench {
  root: Context
  parent: Agent
  runner: Context['inprocessRun']
  request(parent: Agent): SubagentStartRequest
  check(result: Awaited<SubagentRun['result']>): void
  /** One BENCH.md cycle; resolves with its duration in µs. The child's absence is checked after timing. */
  cycle(): Promise<number>
  /** Waits for the session store's writes and exports queued spans (if any). */
  flush(): Promise<void>
  /** Outside timed windows: pending writes done, recorded spans dropped, then a full GC. */
  quiesce(): Promise<void>
  /** Spans the full variant's exporter holds (after `flush()`: every span ended since the last `quiesce()`; 0 elsewhere). */
  spansRecorded(): number
  /** Empties the full variant's span exporter. */
  dropSpans(): void
  /** Files in the full variant's SessionFiles folder (0 elsewhere). */
  filesWritten(): Promise<number>
}

export async function setupHost(variant: Variant, options: HostOptions): Promise<Bench> {
  const { budget, observer, structured = false, store, full = [] } = options
  const root = new Context()
  await root.plugin(Host, { maxSteps: 32 })
  await root.plugin(ScriptedModel, { provider: 'scripted', record: false })
  await root.plugin(InProcessRun)
  if (structured) {
    const { default: StructuredOutput } = await import('../plugins/structured-output/index.ts')
    await root.plugin(StructuredOutput)
  }
  if (budget) {
    const { default: TreeBudget } = await import('../plugins/tree-budget/index.ts')
    await root.plugin(TreeBudget, budget)
  }
  if (observer && variant === 'inspector') {
    const { default: Inspector } = await import('../plugins/inspector/index.ts')
    await root.plugin(Inspector, {})
  }
  if (observer && variant === 'approvals') {
    const { default: Approvals } = await import('../plugins/approvals/index.ts')
    await root.plugin(Approvals, { default: 'allow', readOnly: 'allow', rules: [], children: 'route' })
  }
  if (observer && variant === 'tracing') {
    const { default: Tracing } = await import('../plugins/tracing/index.ts')
    await root.plugin(Tracing, {})
  }
  const production = await loadFullPlugins(root, full)
  const storeFlush = store ? await loadStore(root, store) : undefined
  const flush = async () => {
    await storeFlush?.()
    await production.flush()
  }
  const answer = { text: 'ok', usage: { inputTokens: 16, outputTokens: 1 } }
  const capture = { toolCalls: [{ id: 'c1', name: 'structured_output', arguments: '{"answer":"ok"}' }], usage: answer.usage }
  root.scripted.repeat(structured ? (request) => (request.tools?.length ? capture : answer) : answer)
  const handle = await root.agents.create({ agentOptions: { provider: 'scripted', model: 'bench' } })
  // services are read once, as a plugin holding them would: in cordis every property read of a
  // service on a context is a lookup that builds a stack-capturing Error, the harness's cost and
  // not the cycle's (about a fifth of the sequential loop's CPU profile)
  const runner = root.inprocessRun
  const { agents, sessions } = root
  let n = 0
  const request = (parent: Agent): SubagentStartRequest => {
    const label = `task ${++n}`
    return { parent, prompt: label, label, signal: new AbortController().signal, ...(structured ? { outputSchema } : {}) }
  }
  const check = (result: Awaited<SubagentRun['result']>) => {
    const text = result.output[0]?.type === 'text' ? result.output[0].text : undefined
    if (result.stopReason !== 'completed') throw new Error(`cycle ended ${result.stopReason}: ${result.diagnostic}`)
    if (structured ? (result.structured as { answer?: string })?.answer !== 'ok' : text !== 'ok') {
      throw new Error(`unexpected result ${JSON.stringify(result)}`)
    }
  }
  const cycle = async (): Promise<number> => {
    const t0 = performance.now()
    const run = await runner.spawn(request(handle.agent))
    check(await run.result)
    await run.dispose()
    const elapsed = (performance.now() - t0) * 1000
    if (agents.get(run.id) || sessions.get(run.id)) throw new Error('child survived dispose')
    return elapsed
  }
  const quiesce = async () => {
    await flush()
    production.dropSpans()
    await fullGc()
  }
  return { root, parent: handle.agent, runner, request, check, cycle, flush, quiesce, spansRecorded: production.spansRecorded, dropSpans: production.dropSpans, filesWritten: production.filesWritten }
}

/**
 * Cycle times (µs) of two hosts, `blocks` blocks of 250 cycles each, alternating so both see the
 * same machine noise and JIT state. The order flips every block (A B, B A, …): whichever host runs
 * second in a pair reads 1.5–2 % slower (two identical plain hosts measured this way: +1.4 to
 * +2.0 %), a bias that a fixed order charges to one host.
 */
export async function alternatingBlocks(first: Pick<Bench, 'cycle'>, second: Pick<Bench, 'cycle'>, blocks: number): Promise<[number[], number[]]> {
  const firstTimes: number[] = []
  const secondTimes: number[] = []
  for (let b = 0; b < blocks; b++) {
    const [lead, lag, leadTimes, lagTimes] = b % 2 === 0 ? [first, second, firstTimes, secondTimes] : [second, first, secondTimes, firstTimes]
    for (let i = 0; i < 250; i++) leadTimes.push(await lead.cycle())
    for (let i = 0; i < 250; i++) lagTimes.push(await lag.cycle())
  }
  return [firstTimes, secondTimes]
}

/** Starts `count` children of the bench's parent and keeps them, settled and undisposed. */
export async function keepChildren(bench: Bench, count: number): Promise<SubagentRun[]> {
  const kept: SubagentRun[] = []
  for (let i = 0; i < count; i++) {
    const run = await bench.runner.spawn(bench.request(bench.parent))
    bench.check(await run.result)
    kept.push(run)
  }
  return kept
}

/**
 * `warmUp` cycles, `quiesce()`, then `count` timed cycles: the sorted samples and the timed loop's
 * wall time in ms.
 */
export async function timedWindow(bench: Bench, warmUp: number, count: number): Promise<{ sorted: number[]; wallMs: number }> {
  for (let i = 0; i < warmUp; i++) await bench.cycle()
  await bench.quiesce()
  const samples = new Array<number>(count)
  const wall = performance.now()
  for (let i = 0; i < count; i++) samples[i] = await bench.cycle()
  const wallMs = performance.now() - wall
  return { sorted: samples.sort((a, b) => a - b), wallMs }
}
