/**
 * The `Approvals` config (SPEC §11.1): its schemastery schema and the checks schemastery does not
 * make (unknown keys, at the top and in each rule, with a `did you mean`).
 */
import Schema from 'schemastery'
import { type ApprovalDecisionWord, type ApprovalRule, approvalPolicyProblems } from '../../lib/approval/policy.ts'
import { closestName } from '../../lib/text/closest-name.ts'
import { type Locale, localeOption, localizeConfig } from '../../locales/index.ts'

export interface ApprovalsConfig {
  /** The decision for a call no rule matches (a tool not marked read-only). */
  default: ApprovalDecisionWord
  /** The decision for a call of a read-only tool no rule matches. */
  readOnly: ApprovalDecisionWord
  /** The first rule whose `tool` matches a call decides it. */
  rules: ApprovalRule[]
  /** Milliseconds an asked call waits for a decision; absent: no limit. */
  timeout?: number
  /** Where a delegated subagent's request goes: the tree's queue (`route`) or nowhere (`deny`). */
  children: 'route' | 'deny'
  /** Language of what the model sees: denial texts and the `delegation-policy` section. */
  locale?: Locale
}

const decision = Schema.union(['allow', 'ask', 'deny'] as const)

// field descriptions: `config.approvals` in locales/*.yml
export const ApprovalsConfig: Schema<ApprovalsConfig> = localizeConfig(
  Schema.object({
    default: decision.default('allow'),
    readOnly: decision.default('allow'),
    rules: Schema.array(Schema.object({ tool: Schema.string().required(), decision: decision.required() })).default([]),
    timeout: Schema.natural().min(1),
    children: Schema.union(['route', 'deny'] as const).default('route'),
    locale: localeOption(),
  }),
  'approvals',
) as Schema<ApprovalsConfig>

const configKeys = ['default', 'readOnly', 'rules', 'timeout', 'children', 'locale'] as const

/**
 * Every problem schemastery lets through: an unknown key, at the top or in a rule (schemastery
 * keeps such keys without a word, so a typo would silently leave a default in force), a rule tool
 * that is neither a name nor a prefix ending in `*`. Each starts with `Approvals config`.
 */
export function configProblems(config: unknown): string[] {
  if (typeof config !== 'object' || config === null || Array.isArray(config)) return []
  const problems: string[] = []
  for (const key of Object.keys(config)) {
    if ((configKeys as readonly string[]).includes(key)) continue
    const closest = closestName(key, configKeys)
    problems.push(`Approvals config has unknown key ${JSON.stringify(key)}${closest ? ` (did you mean "${closest}"?)` : ''}`)
  }
  const { default: fallback, readOnly, rules } = config as Record<string, unknown>
  const policy: Record<string, unknown> = {}
  if (fallback !== undefined) policy.default = fallback
  if (readOnly !== undefined) policy.readOnly = readOnly
  if (rules !== undefined) policy.rules = rules
  problems.push(...approvalPolicyProblems(policy, 'Approvals config'))
  return problems
}

/** Throws a `TypeError` listing every problem of `config` (`configProblems`), joined with `; `. */
export function assertConfig(config: unknown): void {
  const problems = configProblems(config)
  if (problems.length) throw new TypeError(problems.join('; '))
}
