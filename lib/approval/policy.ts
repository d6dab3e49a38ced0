/**
 * Approval policies (SPEC §11.1): their shape, the check that reads one from untrusted input, the
 * decision a policy gives a tool call, and the strictest merge of two policies. Pure: no cordis.
 */
import { closestName } from '../text/closest-name.ts'

/** What a policy decides for a call, from least to most guarded. */
export type ApprovalDecisionWord = 'allow' | 'ask' | 'deny'

/** The decision words, least guarded first: a later one is stricter. */
export const DECISION_WORDS: readonly ApprovalDecisionWord[] = Object.freeze(['allow', 'ask', 'deny'])

/** One rule: `tool` is an exact tool name, or a prefix ending in `*` (`mcp__*`; `*` alone matches every tool). */
export interface ApprovalRule {
  readonly tool: string
  readonly decision: ApprovalDecisionWord
}

/**
 * A policy (SPEC §11.1), as `AgentOptions.approval`, `SubagentStartRequest.approval`, a definition's
 * `approval` and a child's session header take it. An absent `default` or `readOnly` is `'allow'`;
 * the first rule matching a call wins over both.
 */
export interface ApprovalPolicy {
  readonly default?: ApprovalDecisionWord
  /** The decision for tools marked read-only (`ToolDefinition.readOnly`). */
  readonly readOnly?: ApprovalDecisionWord
  readonly rules?: readonly ApprovalRule[]
}

const policyKeys = ['default', 'readOnly', 'rules'] as const
const ruleKeys = ['tool', 'decision'] as const
const toolPattern = /^(?:[A-Za-z0-9_-]{1,64}|[A-Za-z0-9_-]{0,63}\*)$/

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** True for `'allow'`, `'ask'` or `'deny'`. */
export function isDecisionWord(value: unknown): value is ApprovalDecisionWord {
  return value === 'allow' || value === 'ask' || value === 'deny'
}

/** `<where> must be "allow", "ask" or "deny"`, with a `did you mean` for a near miss. */
export function decisionWordProblem(where: string, value: unknown): string {
  const base = `${where} must be "allow", "ask" or "deny"`
  if (typeof value !== 'string') return base
  const closest = closestName(value, DECISION_WORDS)
  return closest === undefined ? `${base}, not ${JSON.stringify(value)}` : `${base} (did you mean "${closest}"?)`
}

/** `<where> has unknown key "<key>"`, with a `did you mean` for a near miss. */
function unknownKeyProblem(where: string, key: string, known: readonly string[]): string {
  const closest = closestName(key, known)
  return closest === undefined
    ? `${where} has unknown key ${JSON.stringify(key)}`
    : `${where} has unknown key ${JSON.stringify(key)} (did you mean "${closest}"?)`
}

/**
 * Every problem of `value` as a policy, each a sentence starting with `subject` (e.g. `subagent
 * request approval`): not an object, an unknown key (with a `did you mean`), a wrong decision word,
 * a rule that is not `{tool, decision}` or whose `tool` is neither a tool name nor a prefix ending
 * in `*`. Empty for a well-formed policy. Each field is read once.
 */
export function approvalPolicyProblems(value: unknown, subject: string): string[] {
  if (!isMapping(value)) return [`${subject} must be an object with default, readOnly and/or rules`]
  const problems: string[] = []
  for (const key of Object.keys(value)) {
    if (!(policyKeys as readonly string[]).includes(key)) problems.push(unknownKeyProblem(subject, key, policyKeys))
  }
  const { default: fallback, readOnly, rules } = value
  if (fallback !== undefined && !isDecisionWord(fallback)) problems.push(decisionWordProblem(`${subject} default`, fallback))
  if (readOnly !== undefined && !isDecisionWord(readOnly)) problems.push(decisionWordProblem(`${subject} readOnly`, readOnly))
  if (rules !== undefined) {
    if (!Array.isArray(rules)) problems.push(`${subject} rules must be an array of {tool, decision}`)
    else for (let index = 0; index < rules.length; index++) problems.push(...ruleProblems(rules[index], `${subject} rules[${index}]`))
  }
  return problems
}

function ruleProblems(rule: unknown, where: string): string[] {
  if (!isMapping(rule)) return [`${where} must be an object with tool and decision`]
  const problems: string[] = []
  for (const key of Object.keys(rule)) {
    if (!(ruleKeys as readonly string[]).includes(key)) problems.push(unknownKeyProblem(where, key, ruleKeys))
  }
  const { tool, decision } = rule
  if (typeof tool !== 'string' || !toolPattern.test(tool)) {
    problems.push(`${where} tool must be a tool name or a prefix ending in "*"`)
  }
  if (!isDecisionWord(decision)) problems.push(decisionWordProblem(`${where} decision`, decision))
  return problems
}

/**
 * Reads `value` as a policy: a frozen copy holding only the fields given. Throws a `TypeError`
 * whose message lists every problem `approvalPolicyProblems` finds, joined with `; `.
 */
export function readApprovalPolicy(value: unknown, subject: string): ApprovalPolicy {
  const problems = approvalPolicyProblems(value, subject)
  if (problems.length) throw new TypeError(problems.join('; '))
  const { default: fallback, readOnly, rules } = value as Record<string, unknown>
  const policy: { default?: ApprovalDecisionWord; readOnly?: ApprovalDecisionWord; rules?: readonly ApprovalRule[] } = {}
  if (fallback !== undefined) policy.default = fallback as ApprovalDecisionWord
  if (readOnly !== undefined) policy.readOnly = readOnly as ApprovalDecisionWord
  if (rules !== undefined) {
    policy.rules = Object.freeze(
      (rules as { tool: string; decision: ApprovalDecisionWord }[]).map(({ tool, decision }) => Object.freeze({ tool, decision })),
    )
  }
  return Object.freeze(policy)
}

/** True when the rule pattern `tool` (a name, or a prefix ending in `*`) matches the tool `name`. */
export function matchesTool(tool: string, name: string): boolean {
  return tool.endsWith('*') ? name.startsWith(tool.slice(0, -1)) : tool === name
}

/** The stricter of two decisions (`deny` > `ask` > `allow`). */
export function stricter(a: ApprovalDecisionWord, b: ApprovalDecisionWord): ApprovalDecisionWord {
  return DECISION_WORDS.indexOf(a) >= DECISION_WORDS.indexOf(b) ? a : b
}

/** The rule of `policy` that decides the tool `name`: the first that matches, or `undefined`. */
export function matchingRule(policy: ApprovalPolicy | undefined, name: string): ApprovalRule | undefined {
  const rules = policy?.rules
  if (rules) for (let i = 0; i < rules.length; i++) if (matchesTool(rules[i]!.tool, name)) return rules[i]
  return undefined
}

/**
 * What `policy` decides for a call of the tool `name`: its first matching rule, else `readOnly`
 * for a read-only tool, else `default` (each `'allow'` when absent). No policy allows everything.
 */
export function decideByPolicy(policy: ApprovalPolicy | undefined, name: string, readOnly: boolean): ApprovalDecisionWord {
  if (!policy) return 'allow'
  const rule = matchingRule(policy, name)
  if (rule) return rule.decision
  return (readOnly ? policy.readOnly : policy.default) ?? 'allow'
}

/** True when `policy` allows every call (no policy, or nothing in it guards anything). */
export function allowsEverything(policy: ApprovalPolicy | undefined): boolean {
  if (!policy) return true
  if ((policy.default ?? 'allow') !== 'allow' || (policy.readOnly ?? 'allow') !== 'allow') return false
  return !policy.rules?.some((rule) => rule.decision !== 'allow')
}

/** Rule patterns, most specific first: exact names, then prefixes longest first; ties by text. */
function bySpecificity(a: string, b: string): number {
  const aPrefix = a.endsWith('*')
  const bPrefix = b.endsWith('*')
  if (aPrefix !== bPrefix) return aPrefix ? 1 : -1
  if (a.length !== b.length) return b.length - a.length
  return a < b ? -1 : a > b ? 1 : 0
}

/**
 * A tool name every tool of a pattern's region matches exactly as the pattern's own tools do: for
 * a prefix `p*`, the name `p` followed by a character no other pattern can hold there. Only the
 * set of patterns a name matches counts, and for the most specific pattern a name matches that
 * set is the same for every name of the region.
 */
function representative(pattern: string): string {
  // `*` cannot be part of a tool name, so no exact pattern equals it and a prefix ends before it
  return pattern.endsWith('*') ? `${pattern.slice(0, -1)}*` : pattern
}

/**
 * One policy that decides every call at least as strictly as the stricter of `a` and `b` would
 * (`deny` > `ask` > `allow`), as one `{default?, readOnly?, rules?}` policy: the value a child's
 * header records for its ancestors' and its own policies. Exact for every call, with one
 * exception the shape cannot express: a tool one policy decides by a rule and the other by its
 * `readOnly`/`default` split gets the stricter of both sides of that split, read-only or not.
 * Never weaker than either policy. Fields that would be `'allow'` and an empty rule list are left out.
 */
export function mergeStrictest(a: ApprovalPolicy | undefined, b: ApprovalPolicy | undefined): ApprovalPolicy {
  if (allowsEverything(a)) return normalized(b)
  if (allowsEverything(b)) return normalized(a)
  const patterns = new Set<string>()
  for (const rule of a?.rules ?? []) patterns.add(rule.tool)
  for (const rule of b?.rules ?? []) patterns.add(rule.tool)
  const rules: ApprovalRule[] = []
  for (const pattern of [...patterns].sort(bySpecificity)) {
    const name = representative(pattern)
    const decision = stricter(
      stricter(decideByPolicy(a, name, false), decideByPolicy(b, name, false)),
      stricter(decideByPolicy(a, name, true), decideByPolicy(b, name, true)),
    )
    rules.push(Object.freeze({ tool: pattern, decision }))
  }
  const merged: { default?: ApprovalDecisionWord; readOnly?: ApprovalDecisionWord; rules?: readonly ApprovalRule[] } = {}
  const fallback = stricter(a?.default ?? 'allow', b?.default ?? 'allow')
  const readOnly = stricter(a?.readOnly ?? 'allow', b?.readOnly ?? 'allow')
  if (fallback !== 'allow') merged.default = fallback
  if (readOnly !== 'allow') merged.readOnly = readOnly
  if (rules.length) merged.rules = Object.freeze(rules)
  return Object.freeze(merged)
}

/** `policy` without the fields that only say `'allow'` by default; frozen. */
function normalized(policy: ApprovalPolicy | undefined): ApprovalPolicy {
  if (!policy) return Object.freeze({})
  const out: { default?: ApprovalDecisionWord; readOnly?: ApprovalDecisionWord; rules?: readonly ApprovalRule[] } = {}
  if (policy.default !== undefined && policy.default !== 'allow') out.default = policy.default
  if (policy.readOnly !== undefined && policy.readOnly !== 'allow') out.readOnly = policy.readOnly
  if (policy.rules?.length) out.rules = Object.freeze(policy.rules.map((rule) => Object.freeze({ tool: rule.tool, decision: rule.decision })))
  return Object.freeze(out)
}
