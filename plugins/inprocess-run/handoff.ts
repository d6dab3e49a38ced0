/**
 * The handoff (SPEC §2.3–§2.5): after publication, subscribe the abort signal, send the prompt,
 * drive the child to idle and settle its result through `subagent/settle` and `subagent/end`.
 */
import { type AbortSubscription, subscribe, unsubscribe } from '../../lib/async/abort-signal.ts'
import { SubagentError, thrownMessage } from '../../lib/errors.ts'
import { readResult } from '../../lib/session/read-result.ts'
import type { ContentBlock, RunTicket, SubagentInfo, SubagentResult, SubagentRun } from '../../lib/types.ts'
import { englishDiagnostic } from '../../locales/index.ts'
import type { Dispatch } from '../../cordis-glue/bridge.ts'

/**
 * What the handoff reads and marks on its run: the run itself is what `subagent/settle` listeners
 * receive, so it exists before the handoff starts and holds the state the handoff changes.
 */
export interface HandedOffRun extends SubagentRun {
  /** Events of a fork seed at the head of the child's session: not part of its result. */
  readonly seedLength: number
  markCancelled(): void
  /** Keeps the abort subscription, so `dispose()` can drop it before the result settles. */
  holdAbort(subscription: ParentAbort): void
  releaseAbort(): void
  /** Observer info; with a result, its stop reason and usage; with `error`, that message. */
  info(result?: SubagentResult, error?: string): SubagentInfo
}

/**
 * The run's live abort listener (SPEC §2.3): when the request's signal aborts, marks the run
 * cancelled and cancels the child with cause `parent`. Its own subscription (see
 * lib/async/abort-signal.ts), shared with every other run of the same signal: one object per run, where
 * a callback, its record and its remover were three.
 */
export class ParentAbort implements AbortSubscription {
  private declare readonly run: HandedOffRun
  private declare readonly signal: AbortSignal

  constructor(run: HandedOffRun, signal: AbortSignal) {
    this.run = run
    this.signal = signal
    subscribe(signal, this)
  }

  onAbort(): void {
    const { run } = this
    run.markCancelled()
    run.agent.cancel({ kind: 'parent' })
  }

  /** Unsubscribes; calling it again does nothing. */
  release(): void {
    unsubscribe(this.signal, this)
  }
}

/** True for the host's refusal of input to an agent whose disposal already started. */
function isDisposal(error: unknown): boolean {
  return SubagentError.is(error) && error.code === 'AGENT_DISPOSED'
}

/** The exact result of a run whose signal aborted between publication and handoff. */
function gapAbortResult(): SubagentResult {
  return { output: [], stopReason: 'aborted' }
}

/**
 * Hands `prompt` to the published child of `run` and returns its settled result; `prompt` and
 * `signal` are the request's as the entry read them (never read again from the caller's object). Emits
 * `subagent/start` first and exactly one `subagent/end` whatever happens; calls `ticket.settled()`
 * (what admission booked) exactly once, as the result settles either way. The promise rejects only
 * if sending the prompt failed for another reason than the child's disposal, or the ticket or a
 * `subagent/settle` listener threw; it never rejects unobserved (a catch is attached here).
 */
export function handOff(
  run: HandedOffRun,
  prompt: string | ContentBlock[],
  signal: AbortSignal,
  dispatch: Dispatch,
  ticket: RunTicket | undefined,
): Promise<SubagentResult> {
  const child = run.agent
  // observers hear the start before anything the run does can end it
  if (dispatch.has('subagent/start')) dispatch.emit('subagent/start', [run.info()])
  // shared with every other run of the same signal: one caller may start many runs with it
  run.holdAbort(new ParentAbort(run, signal))
  let result: Promise<SubagentResult>
  // an abort that landed between publication and here: the prompt is never sent
  if (signal.aborted) {
    run.markCancelled()
    result = settleEarly(run, dispatch, gapAbortResult(), ticket)
  } else {
    let sent: unknown
    try {
      child.followup(prompt)
    } catch (error) {
      sent = error ?? new SubagentError('FOLLOWUP_FAILED', 'followup failed')
    }
    if (sent === undefined) result = drive(run, dispatch, ticket)
    else if (isDisposal(sent)) {
      // the child's owner was disposed in the gap: a cancellation (SPEC §2.5), not a fault
      run.markCancelled()
      result = settleEarly(run, dispatch, readResult(child.session.events, run.seedLength, true, englishDiagnostic), ticket)
    } else result = fail(run, dispatch, sent, ticket)
  }
  // a result nobody awaits must not become an unhandled rejection
  result.catch(ignoreRejection)
  return result
}

function ignoreRejection(): void {}

async function drive(run: HandedOffRun, dispatch: Dispatch, ticket: RunTicket | undefined): Promise<SubagentResult> {
  const child = run.agent
  await child.whenIdle()
  const settled = settle(run, dispatch, readResult(child.session.events, run.seedLength, run.isCancelled, englishDiagnostic), ticket)
  // the hook's promise awaited, not returned: an async function adopts a returned promise through
  // a thenable job, one more promise and two more ticks
  return settled instanceof Promise ? await settled : settled
}

async function fail(run: HandedOffRun, dispatch: Dispatch, error: unknown, ticket: RunTicket | undefined): Promise<never> {
  run.releaseAbort()
  try {
    ticket?.settled()
  } catch {
    // the result already rejects with the send's failure, which says more than the ticket's
  }
  emitFailedEnd(run, dispatch, error)
  throw error
}

/**
 * Settles `read`: gives the ticket back, runs `subagent/settle` listeners over the result (only
 * when someone listens), releases the abort subscription and emits `subagent/end`. Returns the
 * result itself when nobody listens to `subagent/settle` (a plain run's result then needs no
 * async layer of its own); throws, or rejects, with what the ticket or a listener threw, after
 * emitting the failed `subagent/end`.
 */
function settle(
  run: HandedOffRun,
  dispatch: Dispatch,
  read: SubagentResult,
  ticket: RunTicket | undefined,
): SubagentResult | Promise<SubagentResult> {
  if (ticket) {
    try {
      // set on the result the handoff just built, before any listener sees it: no copy
      const treeUsage = ticket.settled()
      if (treeUsage) read.treeUsage = treeUsage
    } catch (error) {
      emitFailedEnd(run, dispatch, error)
      run.releaseAbort()
      throw error
    }
  }
  if (dispatch.has('subagent/settle')) return settleThroughHook(run, dispatch, read)
  run.releaseAbort()
  emitEnd(run, dispatch, read)
  return read
}

function settleThroughHook(run: HandedOffRun, dispatch: Dispatch, read: SubagentResult): Promise<SubagentResult> {
  // one reaction on the waterfall's promise instead of an async frame awaiting it
  return dispatch.waterfallAsync('subagent/settle', [read, run], () => read).then(
    (result) => {
      run.releaseAbort()
      emitEnd(run, dispatch, result)
      return result
    },
    (error: unknown) => {
      emitFailedEnd(run, dispatch, error)
      run.releaseAbort()
      throw error
    },
  )
}

/** `settle` as a promise, for the paths that end a run without driving it (a throw becomes its rejection). */
function settleEarly(run: HandedOffRun, dispatch: Dispatch, read: SubagentResult, ticket: RunTicket | undefined): Promise<SubagentResult> {
  try {
    // a promise from the hook path is returned as is, not adopted a few ticks later
    return Promise.resolve(settle(run, dispatch, read, ticket))
  } catch (error) {
    return Promise.reject(error)
  }
}

function emitEnd(run: HandedOffRun, dispatch: Dispatch, result: SubagentResult): void {
  if (dispatch.has('subagent/end')) dispatch.emit('subagent/end', [run.info(result)])
}

/** `subagent/end` for a result that rejected: every start gets its end. */
function emitFailedEnd(run: HandedOffRun, dispatch: Dispatch, error: unknown): void {
  if (dispatch.has('subagent/end')) dispatch.emit('subagent/end', [run.info(undefined, thrownMessage(error))])
}
