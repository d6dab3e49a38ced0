/**
 * Background children (SPEC §8.2): a run the `subagent` tool started and returned from at once.
 * Its result reaches the parent as one `followup` message (source `plugin`), then the run is
 * disposed. Runs belong to their parent, never to a plugin instance: nothing here is tied to the
 * `SubagentTool` fiber, so a hot reload neither cancels nor forgets them.
 */
import { BACKGROUND_DELIVERED_EVENT, BACKGROUND_START_EVENT, interruptedBackgroundRuns } from '../../lib/delegation/background-record.ts'
import type { Diagnostic } from '../../lib/text/diagnostic.ts'
import { SubagentError, thrownMessage } from '../../lib/errors.ts'
import { readResult } from '../../lib/session/read-result.ts'
import type { Agent, ResumedTreeInfo, SubagentResult, SubagentRun } from '../../lib/types.ts'
import { englishDiagnostic, type Locale, text } from '../../locales/index.ts'
import { outputText, toToolResult } from './outcome.ts'

/** One pending background run, as `ctx.subagentTool.pending(parent)` lists it. */
export interface BackgroundRunInfo {
  readonly runId: string
  readonly label: string
}


interface Entry extends BackgroundRunInfo {
  /** Settles once the run is delivered (or dropped) and disposed; never rejects. */
  done: Promise<void>
}

interface Registry {
  byParent: WeakMap<Agent, Map<string, Entry>>
  live: Set<Entry>
}

// one table per process, keyed by a registered symbol: a source reload (`--watch`) may load a second
// copy of this module, and both must see the runs the other started
const registryKey = Symbol.for('subagent-inprocess.background-runs')
const registry: Registry = ((globalThis as Record<symbol, Registry | undefined>)[registryKey] ??= {
  byParent: new WeakMap(),
  live: new Set(),
})

/** What the background delivery needs besides the run. */
export interface DeliveryOptions {
  locale: Locale
  /** Reports a failure that is neither the parent's disposal nor the run's own outcome. */
  report(error: unknown): void
}

/** The `{runId, label}` of the parent's live background runs, in start order. */
export function pendingRuns(parent: Agent): BackgroundRunInfo[] {
  const runs = registry.byParent.get(parent)
  if (!runs) return []
  return [...runs.values()].map(({ runId, label }) => ({ runId, label }))
}

/**
 * Resolves once `parent` (or, without one, every parent in the process) has no pending background
 * run: each result was delivered, or dropped because its parent was disposed. Never rejects.
 */
export async function backgroundSettled(parent?: Agent): Promise<void> {
  for (;;) {
    const entries = parent ? [...(registry.byParent.get(parent)?.values() ?? [])] : [...registry.live]
    if (!entries.length) return
    await Promise.all(entries.map((entry) => entry.done))
  }
}

/** The text a foreground call would have returned: the tool result's text, or the host's `Error: ` form. */
async function foregroundText(run: SubagentRun, locale: Locale): Promise<string> {
  try {
    return outputText(toToolResult(await run.result, locale).content)
  } catch (error) {
    // a rejected result is a thrown tool body: the host renders it `Error: <message>`
    return `Error: ${thrownMessage(error)}`
  }
}

function isDisposal(error: unknown): boolean {
  return SubagentError.is(error) && error.code === 'AGENT_DISPOSED'
}

/**
 * Hands `message` to the parent as a new turn of its own once it is idle. Waiting for idle
 * (instead of queueing behind the running turn) means a cancellation of that turn, which clears
 * the parent's queue, can never drop the result. False when the parent is being disposed.
 */
async function sendWhenIdle(parent: Agent, message: string): Promise<boolean> {
  while (parent.status === 'running') await parent.whenIdle()
  try {
    parent.followup(message, 'plugin')
    return true
  } catch (error) {
    if (isDisposal(error)) return false
    throw error
  }
}

/**
 * Adopts a started run as a background run of `parent`: records its start in the parent's session,
 * then delivers the result exactly once and disposes the run. Disposing the parent disposes the
 * run (the parent owns the child) and delivers nothing. Never produces an unhandled rejection.
 */
export function adoptBackgroundRun(parent: Agent, run: SubagentRun, label: string, options: DeliveryOptions): BackgroundRunInfo {
  parent.session.append(BACKGROUND_START_EVENT, { runId: run.id, label })
  return track(parent, run.id, label, () => foregroundText(run, options.locale), () => run.dispose(), options)
}

/** The result a background run whose process stopped before it finished is delivered as (SPEC §14). */
function stoppedResult(output: SubagentResult['output']): SubagentResult {
  const diagnosticText: Diagnostic = { key: 'processStopped', params: {} }
  return { output, stopReason: 'error', diagnostic: englishDiagnostic(diagnosticText), diagnosticText }
}

/**
 * What a background child of a resumed tree left: its own result when its run had finished before
 * the process stopped (only its delivery was lost), else a non-completed result with the diagnostic
 * `the process stopped before the run finished` — its last turn was closed `interrupted` by the
 * resume, or the child is not in the tree at all.
 */
function resumedResult(child: Agent | undefined): SubagentResult {
  if (!child) return stoppedResult([])
  const seedLength = child.session.header.seedLength ?? 0
  const read = readResult(child.session.events, seedLength, false, englishDiagnostic)
  let lastEnd: unknown
  for (let i = child.session.events.length - 1; i >= seedLength && lastEnd === undefined; i--) {
    const event = child.session.events[i]!
    if (event.type === 'turn/end') lastEnd = (event.data as { reason?: { kind?: unknown } } | null)?.reason?.kind
  }
  if (lastEnd !== undefined && lastEnd !== 'interrupted') return read
  return stoppedResult(read.output)
}

/**
 * Delivers, once, every background run of a resumed tree that its parent's log started and never
 * delivered (SPEC §14): as the run's own result when it had finished, else as a failed one with the
 * diagnostic `the process stopped before the run finished`. Each is a pending run of its parent
 * until delivered (`pendingRuns`, `backgroundSettled`); then the child, when the tree holds it, is
 * disposed, as a delivered background run is. Never produces an unhandled rejection.
 */
export function deliverAfterResume(tree: ResumedTreeInfo, options: DeliveryOptions): void {
  const byId = new Map(tree.agents.map((agent) => [agent.id, agent]))
  for (const parent of [tree.root, ...tree.agents]) {
    for (const { runId, label } of interruptedBackgroundRuns(parent.session.events)) {
      const child = byId.get(runId)
      const text = async () => outputText(toToolResult(resumedResult(child), options.locale).content)
      const dispose = async () => {
        const handle = child ? tree.handleOf(child) : undefined
        await handle?.dispose()
      }
      track(parent, runId, label, text, dispose, options)
    }
  }
}

/**
 * Records a pending background run of `parent` and delivers it: the message made from `result()`
 * once the parent is idle, the delivery record right after it, then `dispose()`. Disposing the
 * parent first drops the message.
 */
function track(
  parent: Agent,
  runId: string,
  label: string,
  result: () => Promise<string>,
  dispose: () => Promise<void>,
  options: DeliveryOptions,
): BackgroundRunInfo {
  let runs = registry.byParent.get(parent)
  if (!runs) registry.byParent.set(parent, (runs = new Map()))
  const parentRuns = runs
  const deliver = async (): Promise<void> => {
    try {
      const message = text(options.locale, 'subagentTool.background.finished', { label, runId, text: await result() })
      if (await sendWhenIdle(parent, message)) parent.session.append(BACKGROUND_DELIVERED_EVENT, { runId })
    } catch (error) {
      options.report(error)
    } finally {
      // no longer pending once handed over (or dropped); disposal follows
      parentRuns.delete(runId)
      if (!parentRuns.size && registry.byParent.get(parent) === parentRuns) registry.byParent.delete(parent)
      await dispose().catch(options.report)
    }
  }
  const entry: Entry = {
    runId,
    label,
    done: deliver().finally(() => {
      registry.live.delete(entry)
    }),
  }
  parentRuns.set(runId, entry)
  registry.live.add(entry)
  return { runId, label }
}
