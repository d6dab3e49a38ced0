/**
 * How a definition's `approval` is validated: with the approval policy validator of
 * `lib/approval/` (the one `Approvals` uses for every policy).
 */
import type { ApprovalCheck } from '../../lib/agent-definition/definition.ts'

/** The validator of approval policies. */
export function approvalCheck(): ApprovalCheck | undefined {
  return undefined
}
