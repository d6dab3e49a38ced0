/**
 * An agent definition (SPEC §12): the fields of one file's front matter (or one inline entry),
 * validated. Pure: no cordis, no I/O. Every problem is collected, each with the line of its field
 * when known; an unknown field is a problem too (with the closest known field), never ignored: a
 * misspelt `tools` must not leave the child with every tool.
 */
import { closestName } from '../text/closest-name.ts'
import { schemaViolations } from '../schema/schema-subset.ts'
import { assertReservation } from '../delegation/tree-budget.ts'
import type { ApprovalPolicy, BudgetReservation, JsonSchema } from '../types.ts'
import { approvalPolicyProblems, readApprovalPolicy } from '../approval/policy.ts'
import type { DefinitionProblem } from './front-matter.ts'

/** A definition's name: what the parent model passes as `agent`, and the child's header records. */
export const DEFINITION_NAME = /^[a-z][a-z0-9-]{0,63}$/

/** The longest `description` (characters). */
export const MAX_DESCRIPTION_LENGTH = 1024

/** A validated, frozen agent definition. */
export interface AgentDefinition {
  readonly name: string
  /** What the parent model reads to choose this definition. */
  readonly description: string
  /** The body of the file (or the inline `persona`): the child's persona; may be empty. */
  readonly persona: string
  /** Tool names, or prefixes ending in `*`, the child may use; absent = no allowlist of its own. */
  readonly tools?: readonly string[]
  /** Tool names, or prefixes ending in `*`, the child may not use. */
  readonly disallowedTools?: readonly string[]
  readonly provider?: string
  readonly model?: string
  readonly maxTokens?: number
  readonly maxSteps?: number
  /** The child's depth cap (inclusive); the smaller of this and any other cap applies. */
  readonly maxDepth?: number
  /** A JSON Schema of the structured-output subset (SPEC §3): the child must answer with it. */
  readonly outputSchema?: JsonSchema
  /** An approval policy (SPEC §11.1 shape), merged strictest-wins by `Approvals`. */
  readonly approval?: ApprovalPolicy
  /** A tree-budget reservation (SPEC §9) for the child's subtree. */
  readonly budget?: Readonly<BudgetReservation>
  /** The `subagent` tool's default for `background` when this definition is used. */
  readonly background?: boolean
  /** Where it was read: a file's absolute path, or `definitions[<i>]` for an inline one. */
  readonly source: string
}

/** The fields a definition may have, in the order SPEC §12 lists them. */
export const DEFINITION_FIELDS = [
  'name',
  'description',
  'tools',
  'disallowedTools',
  'provider',
  'model',
  'maxTokens',
  'maxSteps',
  'maxDepth',
  'outputSchema',
  'approval',
  'budget',
  'background',
] as const

/** Inline definitions carry their persona as a field (a file has its body). */
const INLINE_FIELDS: readonly string[] = [...DEFINITION_FIELDS, 'persona']

export interface ReadOptions {
  /** Where the fields come from (see `AgentDefinition.source`). */
  readonly source: string
  /** The persona from the file's body; an inline definition gives `persona` as a field instead. */
  readonly body?: string
  /** File line of a field, when known. */
  lineOf?(key: string): number | undefined
}

const TOOL_PATTERN = /^[^\s*]+\*?$|^\*$/

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isPositiveInteger(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) > 0
}

function isNatural(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0 && !Object.is(value, -0)
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const inner of Object.values(value)) deepFreeze(inner)
  }
  return value
}

/**
 * Validates the fields of one definition. Returns the frozen definition, or every problem found
 * (the definition is then not usable at all: a half-valid definition could grant more than meant).
 */
export function readDefinition(fields: unknown, options: ReadOptions): AgentDefinition | DefinitionProblem[] {
  const inline = options.body === undefined
  if (!isMapping(fields)) return [{ message: 'a definition must be a mapping of fields' }]
  const problems: DefinitionProblem[] = []
  const at = (key: string) => options.lineOf?.(key)
  const fail = (key: string, message: string) => problems.push({ line: at(key), message })
  const known = inline ? INLINE_FIELDS : (DEFINITION_FIELDS as readonly string[])
  for (const key of Object.keys(fields)) {
    if (known.includes(key)) continue
    const closest = closestName(key, known)
    fail(key, closest === undefined ? `unknown field "${key}" (known fields: ${known.join(', ')})` : `unknown field "${key}" (did you mean "${closest}"?)`)
  }
  const definition: Record<string, unknown> = {}
  const { name, description } = fields
  if (name === undefined) problems.push({ message: 'missing required field "name"' })
  else if (typeof name !== 'string' || !DEFINITION_NAME.test(name)) {
    fail('name', `name must match ${DEFINITION_NAME.source} (lowercase letters, digits and "-", starting with a letter), got ${JSON.stringify(name)}`)
  } else definition.name = name
  if (description === undefined) problems.push({ message: 'missing required field "description"' })
  else if (typeof description !== 'string' || description.trim().length === 0 || description.length > MAX_DESCRIPTION_LENGTH) {
    fail('description', `description must be a string of 1 to ${MAX_DESCRIPTION_LENGTH} characters`)
  } else definition.description = description
  for (const key of ['tools', 'disallowedTools'] as const) {
    const value = fields[key]
    if (value === undefined) continue
    if (!Array.isArray(value)) fail(key, `${key} must be a list of tool names (a name, or a prefix ending in "*")`)
    else {
      const bad = value.find((entry) => typeof entry !== 'string' || !TOOL_PATTERN.test(entry))
      if (bad !== undefined) fail(key, `${key} entry ${JSON.stringify(bad)} is not a tool name or a prefix ending in "*"`)
      else definition[key] = [...new Set(value as string[])]
    }
  }
  for (const key of ['provider', 'model'] as const) {
    const value = fields[key]
    if (value === undefined) continue
    if (typeof value !== 'string' || value.length === 0) fail(key, `${key} must be a non-empty string`)
    else definition[key] = value
  }
  for (const key of ['maxTokens', 'maxSteps'] as const) {
    const value = fields[key]
    if (value === undefined) continue
    if (!isPositiveInteger(value)) fail(key, `${key} must be a positive integer, got ${JSON.stringify(value)}`)
    else definition[key] = value
  }
  if (fields.maxDepth !== undefined) {
    if (!isNatural(fields.maxDepth)) fail('maxDepth', `maxDepth must be a non-negative integer, got ${JSON.stringify(fields.maxDepth)}`)
    else definition.maxDepth = fields.maxDepth
  }
  if (fields.outputSchema !== undefined) {
    const violations = schemaViolations(fields.outputSchema)
    if (violations.length > 0) fail('outputSchema', `outputSchema: unsupported JSON schema: ${violations.join('; ')}`)
    else definition.outputSchema = fields.outputSchema
  }
  if (fields.approval !== undefined) {
    // the validator every policy goes through (SPEC §11.1), so a definition's is judged like a request's
    const found = approvalPolicyProblems(fields.approval, 'approval')
    for (const message of found) fail('approval', message)
    if (found.length === 0) definition.approval = readApprovalPolicy(fields.approval, 'approval')
  }
  if (fields.budget !== undefined) {
    try {
      assertReservation(fields.budget)
      definition.budget = fields.budget
    } catch (error) {
      fail('budget', (error as Error).message.replace('subagent request budget', 'budget'))
    }
  }
  if (fields.background !== undefined) {
    if (typeof fields.background !== 'boolean') fail('background', 'background must be true or false')
    else definition.background = fields.background
  }
  if (inline) {
    const persona = fields.persona
    if (persona !== undefined && typeof persona !== 'string') fail('persona', 'persona must be a string')
    definition.persona = typeof persona === 'string' ? persona.trim() : ''
  } else definition.persona = options.body
  if (problems.length > 0) return problems
  definition.source = options.source
  return deepFreeze(definition as unknown as AgentDefinition)
}
