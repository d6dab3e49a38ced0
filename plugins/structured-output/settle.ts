/**
 * How a capture shapes its run's result (SPEC §3): the `subagent/settle` step shared by the live
 * plugin and by the runs it left behind when it was unloaded.
 */
import type { Diagnostic } from '../../lib/text/diagnostic.ts'
import type { SubagentResult, SubagentRun } from '../../lib/types.ts'
import { englishDiagnostic } from '../../locales/index.ts'
import type { CaptureState } from './stage.ts'

const missingCapture: Diagnostic = Object.freeze({ key: 'missingCapture', params: {} })
const cancelledBeforeCapture: Diagnostic = Object.freeze({ key: 'cancelledBeforeCapture', params: {} })

/**
 * Diagnostic of a run whose child finished cleanly without a committed value. The result carries
 * it in en-US like every diagnostic, beside its key (`diagnosticText`), which readers render.
 */
export const MISSING_CAPTURE = englishDiagnostic(missingCapture)

/** Diagnostic of a cancelled run whose child finished without a committed value. */
export const CANCELLED_BEFORE_CAPTURE = englishDiagnostic(cancelledBeforeCapture)

export type SettleNext = () => SubagentResult | Promise<SubagentResult>

/**
 * The result with the capture applied: `structured` (a frozen JSON copy) when committed; a clean
 * finish without a commit becomes `error`, or `aborted` when the run was cancelled.
 */
export function settleCapture(state: CaptureState, run: SubagentRun, next: SettleNext): Promise<SubagentResult> {
  state.isSettled = true
  // `then`, not an async function: one reaction on the inner result instead of a suspended frame
  return Promise.resolve(next()).then((result) => captured(state, run, result))
}

function captured(state: CaptureState, run: SubagentRun, result: SubagentResult): SubagentResult {
  // `Object.assign`, not a spread: on Node 20 `{...result, structured}` makes a fresh hidden class
  // for every result (≈ 200 B more for each settled run to hold, and slower to build)
  if (state.isCommitted) return Object.assign({}, result, { structured: state.value })
  if (result.stopReason !== 'completed') return result
  return run.isCancelled
    ? Object.assign({}, result, { stopReason: 'aborted' as const, diagnostic: CANCELLED_BEFORE_CAPTURE, diagnosticText: cancelledBeforeCapture })
    : Object.assign({}, result, { stopReason: 'error' as const, diagnostic: MISSING_CAPTURE, diagnosticText: missingCapture })
}
