/**
 * Narrowing, never widening (SPEC §11.1): the policy a child's header records, and the decision an
 * agent's call gets from its own chain of policies.
 */
import {
  type ApprovalDecisionWord,
  type ApprovalPolicy,
  allowsEverything,
  approvalPolicyProblems,
  decideByPolicy,
  mergeStrictest,
  stricter,
} from '../../lib/approval/policy.ts'
import type { Agent, SubagentPlan } from '../../lib/types.ts'

/**
 * What the agent's own chain decides for a call of `name`: the strictest of its header's policy
 * (its ancestors' and its own, recorded when it started) and its `approval` option. The
 * deployment's policy is judged beside it, by the caller.
 */
export function chainDecision(agent: Agent, name: string, readOnly: boolean): ApprovalDecisionWord {
  const recorded = agent.session.header.approval
  const own = agent.options.approval
  if (recorded === undefined && own === undefined) return 'allow'
  return stricter(decideByPolicy(recorded, name, readOnly), decideByPolicy(own, name, readOnly))
}

/** `value` as a policy, or a `TypeError` `<subject> <problem>` listing every problem. */
function checked(value: unknown, subject: string): ApprovalPolicy {
  const problems = approvalPolicyProblems(value, subject)
  if (problems.length) throw new TypeError(problems.join('; '))
  return value as ApprovalPolicy
}

/** A definition's baseline `approval` (SPEC §12, set in `subagent/define`), or `undefined`. */
export function baselineApproval(plan: SubagentPlan): unknown {
  return (plan as { readonly baseline?: { readonly approval?: unknown } }).baseline?.approval
}

/**
 * The policy the child of `plan` records in its header: the strictest of the parent's chain (its
 * header's policy and its `approval` option), the request's `approval`, the child's own
 * `agentOptions.approval` and a definition's baseline `approval`. `undefined` when that allows
 * everything, so a plain start records nothing and allocates nothing. Throws a `TypeError` for a
 * malformed `agentOptions.approval` or baseline `approval` (the request's is checked at entry).
 */
export function childPolicy(plan: SubagentPlan): ApprovalPolicy | undefined {
  const { request } = plan
  const parent = request.parent
  const inherited = parent.session.header.approval
  const parentOwn = parent.options.approval
  const requested = request.approval
  const optionOwn = request.agentOptions?.approval
  const baseline = baselineApproval(plan)
  if (inherited === undefined && parentOwn === undefined && requested === undefined && optionOwn === undefined && baseline === undefined) {
    return undefined
  }
  let merged = mergeStrictest(inherited, parentOwn)
  merged = mergeStrictest(merged, requested)
  if (optionOwn !== undefined) merged = mergeStrictest(merged, checked(optionOwn, 'subagent request agentOptions.approval'))
  if (baseline !== undefined) merged = mergeStrictest(merged, checked(baseline, 'agent definition approval'))
  return allowsEverything(merged) ? undefined : merged
}
