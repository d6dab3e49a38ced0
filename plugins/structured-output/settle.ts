/**
 * How a capture shapes its run's result (SPEC §3): the `subagent/settle` step shared by the live
 * plugin and by the runs it left behind when it was unloaded.
 */
import type { SubagentResult, SubagentRun } from '../../lib/types.ts'
import { text } from '../../locales/index.ts'
import type { CaptureState } from './stage.ts'

/**
 * Diagnostic of a run whose child finished cleanly without a committed value. Diagnostics are
 * result data and stay English (`diagnostic.missingCapture`); `SubagentTool` localizes them.
 */
export const MISSING_CAPTURE = text('en-US', 'diagnostic.missingCapture')

/** Diagnostic of a cancelled run whose child finished without a committed value. */
export const CANCELLED_BEFORE_CAPTURE = text('en-US', 'diagnostic.cancelledBeforeCapture')

export type SettleNext = () => SubagentResult | Promise<SubagentResult>

/**
 * The result with the capture applied: `structured` (a frozen JSON copy) when committed; a clean
 * finish without a commit becomes `error`, or `aborted` when the run was cancelled.
 */
export async function settleCapture(state: CaptureState, run: SubagentRun, next: SettleNext): Promise<SubagentResult> {
  state.isSettled = true
  const result = await next()
  if (state.isCommitted) return { ...result, structured: state.value }
  if (result.stopReason !== 'completed') return result
  return run.isCancelled
    ? { ...result, stopReason: 'aborted', diagnostic: CANCELLED_BEFORE_CAPTURE }
    : { ...result, stopReason: 'error', diagnostic: MISSING_CAPTURE }
}
