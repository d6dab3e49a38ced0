/**
 * The `delegation` system-prompt section (SPEC §9): what an agent that can see `subagent` is told
 * about its depth, the cap and the budget left, while a policy (DepthPolicy, TreeBudget) reports
 * them through the driver's `subagent/outlook`.
 */
import type { DelegationOutlook } from '../../lib/types.ts'
import { type Locale, text } from '../../locales/index.ts'

export const DELEGATION_SECTION = 'delegation'
export const DELEGATION_ORDER = 150

/** The section's text for `outlook`, in `locale`; `toolCap` is the tool's own `maxDepth`, if any. */
export function delegationText(outlook: DelegationOutlook, locale: Locale, toolCap?: number): string {
  const cap = Math.min(outlook.depthCap, toolCap ?? Number.POSITIVE_INFINITY)
  const lines = [text(locale, 'delegation.depth', { depth: String(outlook.depth), child: String(outlook.childDepth) })]
  if (Number.isFinite(cap)) {
    lines.push(text(locale, 'delegation.cap', { cap: String(cap) }))
    if (outlook.childDepth >= cap) lines.push(text(locale, 'delegation.lastLevel'))
  }
  const { budget } = outlook
  if (budget) {
    const amount = (value: number) => (Number.isFinite(value) ? String(value) : text(locale, 'delegation.unlimited'))
    lines.push(
      text(locale, 'delegation.budget', {
        tokens: amount(budget.tokens),
        modelRequests: amount(budget.modelRequests),
        children: amount(budget.children),
      }),
    )
  }
  return lines.join('\n')
}

/** Whether the agent could start a child through the tool now (depth cap, budget). */
export function canDelegate(outlook: DelegationOutlook | undefined, toolCap?: number): boolean {
  // no policy loaded: Part I behaviour, the tool is always listed and the start itself checks
  if (!outlook) return true
  return outlook.canStart && (toolCap === undefined || outlook.childDepth <= toolCap)
}
