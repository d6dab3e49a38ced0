/**
 * The `delegation` system-prompt section (SPEC §9): what an agent that can see `subagent` is told
 * about its depth, the cap and the budget left, while a policy (DepthPolicy, TreeBudget) reports
 * them through the driver's `subagent/outlook`.
 */
import type { DelegationOutlook } from '../../lib/types.ts'
import { type Locale, text } from '../../locales/index.ts'

export const DELEGATION_SECTION = 'delegation'
export const DELEGATION_ORDER = 150

/**
 * The section's text for `outlook`, in `locale`; `toolCap` is the tool's own `maxDepth`, if any.
 * Rendered on every model request of an agent that sees the tool: no closure, no line list.
 */
export function delegationText(outlook: DelegationOutlook, locale: Locale, toolCap?: number): string {
  const cap = Math.min(outlook.depthCap, toolCap ?? Number.POSITIVE_INFINITY)
  const childDepth = outlook.childDepth
  let section = text(locale, 'delegation.depth', { depth: String(outlook.depth), child: String(childDepth) })
  if (Number.isFinite(cap)) {
    section += `\n${text(locale, 'delegation.cap', { cap: String(cap) })}`
    if (childDepth >= cap) section += `\n${text(locale, 'delegation.lastLevel')}`
  }
  const { budget } = outlook
  if (budget) {
    const left = { tokens: amount(budget.tokens, locale), modelRequests: amount(budget.modelRequests, locale), children: amount(budget.children, locale) }
    section += `\n${text(locale, 'delegation.budget', left)}`
  }
  return section
}

/** A budget figure as the model reads it: the number, or the locale's word for no limit. */
function amount(value: number, locale: Locale): string {
  return Number.isFinite(value) ? String(value) : text(locale, 'delegation.unlimited')
}

/** Whether the agent could start a child through the tool now (depth cap, budget). */
export function canDelegate(outlook: DelegationOutlook | undefined, toolCap?: number): boolean {
  // no policy loaded: Part I behaviour, the tool is always listed and the start itself checks
  if (!outlook) return true
  return outlook.canStart && (toolCap === undefined || outlook.childDepth <= toolCap)
}
