/**
 * One run after publication (SPEC §2.3–§2.7), as its caller holds it: the child's handle, the result
 * promise, the cancelled flag and the ids; events, observer info and disposal. It drives nothing:
 * the handoff (`handoff.ts`) sends the prompt and settles the result.
 */
import type { AgentHandle, RunEvent, SubagentInfo, SubagentResult } from '../../lib/types.ts'
import type { StartPlan } from './entry-checks.ts'
import type { HandedOffRun } from './handoff.ts'
import { type RunEventSource, runEvents } from './run-events.ts'

/** What `events()` needs from the driver: shared by every run, nothing registered per run. */
export type EventFeed = Pick<RunEventSource, 'watch' | 'sessionOf'>

export class Run implements HandedOffRun {
  readonly id: string
  readonly result: Promise<SubagentResult>
  readonly seedLength: number
  #cancelled = false
  #releaseAbort: (() => void) | undefined
  #disposal?: Promise<void>
  // the plan and request are not kept: a settled run should not pin its caller's signal; the
  // observer info is rebuilt from the child's header when asked, not held for the run's life
  readonly #rootId: string
  readonly #mode: SubagentInfo['mode']

  /**
   * `handOff` is given the run being built and returns its result: `subagent/settle` listeners
   * receive the run itself, so it must exist before the handoff starts.
   */
  constructor(
    private readonly handle: AgentHandle,
    plan: StartPlan,
    rootId: string,
    private readonly feed: EventFeed,
    handOff: (run: Run) => Promise<SubagentResult>,
  ) {
    this.id = handle.agent.id
    this.seedLength = plan.seed?.length ?? 0
    this.#rootId = rootId
    this.#mode = plan.mode
    this.result = handOff(this)
  }

  get agent() {
    return this.handle.agent
  }

  get isCancelled(): boolean {
    return this.#cancelled
  }

  /** Marks the run cancelled (its signal aborted, its owner went away, or it was disposed). */
  markCancelled(): void {
    this.#cancelled = true
  }

  holdAbort(release: () => void): void {
    this.#releaseAbort = release
  }

  /** Idempotent: drops the abort subscription, so a later abort reaches no settled child. */
  releaseAbort(): void {
    this.#releaseAbort?.()
    this.#releaseAbort = undefined
  }

  /** Idempotent: cancels, awaits disposal of the child and the result; rejects only if disposal failed. */
  dispose(): Promise<void> {
    return (this.#disposal ??= this.#dispose())
  }

  /** The child's and its descendants' events until the result settles (see `SubagentRun.events`). */
  events(): AsyncIterableIterator<RunEvent> {
    const { watch, sessionOf } = this.feed
    const child = this.handle.agent
    return runEvents({ child, seedLength: this.seedLength, depth: this.#depth(), result: this.result, watch, sessionOf })
  }

  /** Observer info for `subagent/start` and `subagent/end`: run, lineage and request fields from the child's header. */
  info(result?: SubagentResult): SubagentInfo {
    const { id } = this
    const { parentSession, label, callId } = this.handle.agent.session.header
    const info: SubagentInfo = {
      runId: id,
      parentId: parentSession as string,
      childId: id,
      rootId: this.#rootId,
      mode: this.#mode,
      depth: this.#depth(),
      ...(label !== undefined ? { label } : {}),
      ...(callId !== undefined ? { callId } : {}),
    }
    if (!result) return info
    return { ...info, stopReason: result.stopReason, ...(result.usage ? { usage: result.usage } : {}) }
  }

  /** The child's depth, as its header (written from the plan at creation) records it. */
  #depth(): number {
    return this.handle.agent.session.header.delegationDepth as number
  }

  async #dispose(): Promise<void> {
    this.releaseAbort()
    this.#cancelled = true
    const disposal = this.handle.dispose()
    // both settle before this does, as with `Promise.allSettled`, without its array and records
    // (≈ 0.6 KB a cycle): the result never rejects for the disposal, so awaiting it after is safe
    let failure: { error: unknown } | undefined
    try {
      await disposal
    } catch (error) {
      failure = { error }
    }
    await this.result.then(settledAnyway, settledAnyway)
    if (failure) throw failure.error
  }
}

/** Ignores how the result settled: `dispose()` only waits for it. */
function settledAnyway(): void {}
