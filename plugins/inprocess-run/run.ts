/**
 * One run after publication (SPEC §2.3–§2.7), as its caller holds it: the child and its disposal,
 * the result promise, the cancelled flag and the ids; events, observer info and disposal. It drives nothing:
 * the handoff (`handoff.ts`) sends the prompt and settles the result.
 */
import type { Agent, AgentHandle, RunEvent, SubagentInfo, SubagentResult } from '../../lib/types.ts'
import type { HandedOffRun, ParentAbort } from './handoff.ts'
import { type RunEventSource, runEvents } from './run-events.ts'

/** What `events()` needs from the driver: shared by every run, nothing registered per run. */
export type EventFeed = Pick<RunEventSource, 'watch' | 'sessionOf'>

/**
 * The caller's run. A settled run lives as long as its caller holds it, so it keeps only what
 * `result`, `dispose`, `events` and `info` need: the id, seed length, mode and depth are read from
 * the child's frozen header when asked (it records each at creation), and no method is `#private`
 * (that would give every run a brand slot).
 */
export class Run implements HandedOffRun {
  // `declare`d fields, assigned in the constructor: see docs/performance.md, "Declared fields"
  declare readonly result: Promise<SubagentResult>
  declare readonly agent: Agent
  /**
   * The handle's `dispose`, kept without the handle: the handle object is one more per settled
   * run, and the run reads nothing else of it.
   */
  private declare readonly disposeChild: () => Promise<void>
  private declare readonly feed: EventFeed
  #cancelled = false
  #abort: ParentAbort | undefined = undefined
  #disposal?: Promise<void> = undefined
  // the plan and request are not kept: a settled run should not pin its caller's signal; the
  // observer info is rebuilt from the child's header when asked, not held for the run's life
  readonly #rootId: string
  /** The tool execution that started the run, for observers (`SubagentInfo.execution`). */
  readonly #execution: symbol | undefined

  /**
   * `handOff` is given the run being built and returns its result: `subagent/settle` listeners
   * receive the run itself, so it must exist before the handoff starts.
   */
  constructor(
    handle: AgentHandle,
    rootId: string,
    execution: symbol | undefined,
    feed: EventFeed,
    handOff: (run: Run) => Promise<SubagentResult>,
  ) {
    this.agent = handle.agent
    this.disposeChild = handle.dispose
    this.feed = feed
    this.#rootId = rootId
    this.#execution = execution
    this.result = handOff(this)
  }

  get id(): string {
    return this.agent.id
  }

  /** Events of a fork seed at the head of the child's session (0 for a spawn): the header's `seedLength`. */
  get seedLength(): number {
    return this.agent.session.header.seedLength ?? 0
  }

  get isCancelled(): boolean {
    return this.#cancelled
  }

  /** Marks the run cancelled (its signal aborted, its owner went away, or it was disposed). */
  markCancelled(): void {
    this.#cancelled = true
  }

  holdAbort(subscription: ParentAbort): void {
    this.#abort = subscription
  }

  /** Idempotent: drops the abort subscription, so a later abort reaches no settled child. */
  releaseAbort(): void {
    this.#abort?.release()
    this.#abort = undefined
  }

  /** Idempotent: cancels, awaits disposal of the child and the result; rejects only if disposal failed. */
  dispose(): Promise<void> {
    return (this.#disposal ??= this.disposeNow())
  }

  /** The child's and its descendants' events until the result settles (see `SubagentRun.events`). */
  events(): AsyncIterableIterator<RunEvent> {
    const { watch, sessionOf } = this.feed
    const child = this.agent
    return runEvents({ child, seedLength: this.seedLength, depth: depthOf(child), result: this.result, watch, sessionOf })
  }

  /**
   * Observer info for `subagent/start` and `subagent/end`: run, lineage and request fields from the
   * child's header; with a result, its stop reason and usage; with `error`, the rejection's message.
   */
  info(result?: SubagentResult, error?: string): SubagentInfo {
    const { id } = this
    const child = this.agent
    const { parentSession, label, callId, seedLength, agent } = child.session.header
    // one object, its optional fields assigned: no spread copies (a structured run's end listener
    // makes the driver build this for every run)
    const info: Mutable<SubagentInfo> = {
      runId: id,
      parentId: parentSession as string,
      childId: id,
      rootId: this.#rootId,
      // the header records a seed length exactly for a fork
      mode: seedLength === undefined ? 'spawn' : 'fork',
      depth: depthOf(child),
    }
    if (label !== undefined) info.label = label
    if (callId !== undefined) info.callId = callId
    if (agent !== undefined) info.agent = agent
    if (this.#execution !== undefined) info.execution = this.#execution
    if (result) {
      info.stopReason = result.stopReason
      if (result.usage) info.usage = result.usage
    }
    if (error !== undefined) info.error = error
    return info
  }

  private async disposeNow(): Promise<void> {
    this.releaseAbort()
    this.#cancelled = true
    const disposal = this.disposeChild()
    // both settle before this does, as with `Promise.allSettled`, without its array and records
    // (≈ 0.6 KB a cycle): the result never rejects for the disposal, so awaiting it after is safe
    let failure: { error: unknown } | undefined
    try {
      await disposal
    } catch (error) {
      failure = { error }
    }
    try {
      await this.result
    } catch {
      // dispose() only waits for the result; its rejection is the result's to report
    }
    if (failure) throw failure.error
  }
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

/** The child's depth, as its header (written from the plan at creation) records it. */
function depthOf(child: Agent): number {
  return child.session.header.delegationDepth as number
}
