/**
 * One run after publication (SPEC §2.3–§2.5): handoff, driving, result reading, disposal.
 */
import { subscribeAbort } from '../../lib/abort-signal.ts'
import type { Dispatch } from '../host/cordis-bridge.ts'
import { SubagentError, thrownMessage } from '../../lib/errors.ts'
import { readResult } from '../../lib/read-result.ts'
import type { AgentHandle, RunEvent, SubagentInfo, SubagentResult, SubagentRun } from '../../lib/types.ts'
import type { StartPlan } from './entry-checks.ts'
import { type RunEventSource, runEvents } from './run-events.ts'

/** What `events()` needs from the driver: shared by every run, nothing registered per run. */
export type EventFeed = Pick<RunEventSource, 'watch' | 'sessionOf'>

/** True for the host's refusal of input to an agent whose disposal already started. */
function isDisposal(error: unknown): boolean {
  return SubagentError.is(error) && error.code === 'AGENT_DISPOSED'
}

/** The exact result of a run whose signal aborted between publication and handoff. */
function gapAbortResult(): SubagentResult {
  return { output: [], stopReason: 'aborted' }
}

export class Run implements SubagentRun {
  readonly id: string
  readonly result: Promise<SubagentResult>
  #cancelled = false
  #detach: (() => void) | undefined
  #disposal?: Promise<void>
  // the plan and request are not kept: a settled run should not pin its caller's signal
  readonly #info: SubagentInfo
  readonly #seedLength: number

  constructor(
    private readonly handle: AgentHandle,
    plan: StartPlan,
    private readonly dispatch: Dispatch,
    rootId: string,
    private readonly feed: EventFeed,
  ) {
    const child = handle.agent
    this.id = child.id
    const { request, mode, childDepth } = plan
    this.#seedLength = plan.seed?.length ?? 0
    this.#info = {
      runId: child.id,
      parentId: request.parent.id,
      childId: child.id,
      rootId,
      mode,
      depth: childDepth,
      ...(request.label !== undefined ? { label: request.label } : {}),
      ...(request.callId !== undefined ? { callId: request.callId } : {}),
    }
    // observers hear the start before anything the run does can end it
    if (dispatch.has('subagent/start')) dispatch.emit('subagent/start', [this.info()])
    const { signal, prompt } = request
    const onAbort = () => {
      this.#cancelled = true
      child.cancel({ kind: 'parent' })
    }
    // shared with every other run of the same signal: one caller may start many runs with it
    this.#detach = subscribeAbort(signal, onAbort)
    // an abort that landed between publication and here: the prompt is never sent
    if (signal.aborted) {
      this.#cancelled = true
      this.result = this.#settle(gapAbortResult())
    } else {
      let sent: unknown
      try {
        child.followup(prompt)
      } catch (error) {
        sent = error ?? new Error('followup failed')
      }
      if (sent === undefined) this.result = this.#drive()
      else if (isDisposal(sent)) {
        // the child's owner was disposed in the gap: a cancellation (SPEC §2.5), not a fault
        this.#cancelled = true
        this.result = this.#settle(readResult(child.session.events, this.#seedLength, true))
      } else this.result = this.#fail(sent)
    }
    // a result nobody awaits must not become an unhandled rejection
    this.result.catch(() => {})
  }

  get agent() {
    return this.handle.agent
  }

  get isCancelled(): boolean {
    return this.#cancelled
  }

  /** Idempotent: cancels, awaits disposal of the child and the result; rejects only if disposal failed. */
  dispose(): Promise<void> {
    return (this.#disposal ??= this.#dispose())
  }

  /** The child's and its descendants' events until the result settles (see `SubagentRun.events`). */
  events(): AsyncIterableIterator<RunEvent> {
    const { watch, sessionOf } = this.feed
    return runEvents({ child: this.handle.agent, seedLength: this.#seedLength, depth: this.#info.depth, result: this.result, watch, sessionOf })
  }

  /** Observer info for `subagent/start` and `subagent/end`. */
  info(result?: SubagentResult): SubagentInfo {
    if (!result) return { ...this.#info }
    return { ...this.#info, stopReason: result.stopReason, ...(result.usage ? { usage: result.usage } : {}) }
  }

  /** `subagent/end` for a result that rejected: every start gets its end. */
  #emitFailedEnd(error: unknown): void {
    const dispatch = this.dispatch
    if (dispatch.has('subagent/end')) dispatch.emit('subagent/end', [{ ...this.#info, error: thrownMessage(error) }])
  }

  async #drive(): Promise<SubagentResult> {
    const child = this.handle.agent
    await child.whenIdle()
    return this.#settle(readResult(child.session.events, this.#seedLength, this.#cancelled))
  }

  async #fail(error: unknown): Promise<never> {
    this.#release()
    this.#emitFailedEnd(error)
    throw error
  }

  async #settle(read: SubagentResult): Promise<SubagentResult> {
    const dispatch = this.dispatch
    let result: SubagentResult
    try {
      result = dispatch.has('subagent/settle') ? await dispatch.waterfallAsync('subagent/settle', [read, this], () => read) : read
    } catch (error) {
      this.#emitFailedEnd(error)
      throw error
    } finally {
      this.#release()
    }
    if (dispatch.has('subagent/end')) dispatch.emit('subagent/end', [this.info(result)])
    return result
  }

  #release(): void {
    this.#detach?.()
    this.#detach = undefined
  }

  async #dispose(): Promise<void> {
    this.#release()
    this.#cancelled = true
    const disposal = this.handle.dispose()
    await Promise.allSettled([this.result, disposal])
    await disposal
  }
}
