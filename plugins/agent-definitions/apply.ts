/**
 * A start that names a definition (`request.agent`): the definition becomes the plan's baseline
 * (SPEC §12), or the start is rejected before anything exists.
 */
import type { Catalog, SourceProblem } from '../../lib/agent-definition/catalog.ts'
import type { AgentDefinition } from '../../lib/agent-definition/definition.ts'
import { expandToolPatterns } from '../../lib/agent-definition/tool-patterns.ts'
import { closestName } from '../../lib/text/closest-name.ts'
import { AgentDefinitionError } from './errors.ts'
import type { AgentOptions, SubagentBaseline, SubagentPlan } from '../../lib/types.ts'

/** `unknown agent definition "<name>"`, with ` (did you mean "<other>"?)` when one is close. */
export function unknownDefinitionMessage(name: string, known: readonly string[]): string {
  const closest = closestName(name, known)
  return closest === undefined ? `unknown agent definition "${name}"` : `unknown agent definition "${name}" (did you mean "${closest}"?)`
}

const TOOL_FIELDS = ['tools', 'disallowedTools'] as const

/** `<field> "<a>", "<b>" match(es) no tool`, for each tool field with patterns that select nothing in `globals`. */
function unmatchedTools(definition: AgentDefinition, globals: readonly string[]): string[] {
  const found: string[] = []
  for (const field of TOOL_FIELDS) {
    const patterns = definition[field]
    if (!patterns) continue
    const { unmatched } = expandToolPatterns(patterns, globals)
    if (unmatched.length > 0) found.push(`${field} ${unmatched.map((name) => JSON.stringify(name)).join(', ')} ${unmatched.length === 1 ? 'matches' : 'match'} no tool`)
  }
  return found
}

/**
 * The problems of valid definitions whose tool fields name nothing among `globals` (the global
 * tools that exist now): an allowlist entry or a denial that matches nothing is a typo, never a
 * wider grant.
 */
export function toolProblems(definitions: readonly AgentDefinition[], globals: readonly string[]): SourceProblem[] {
  const problems: SourceProblem[] = []
  for (const definition of definitions) {
    for (const message of unmatchedTools(definition, globals)) problems.push({ source: definition.source, message })
  }
  return problems
}

/**
 * Sets the baseline of `plan` from the definition `name`. Throws `TypeError`
 * `unknown agent definition "<name>"` (with a did-you-mean) for a name the catalog lacks, and
 * `AgentDefinitionError` for a definition whose tools name no tool among `globals`.
 */
export function applyDefinition(plan: SubagentPlan, name: string, catalog: Catalog, globals: readonly string[]): void {
  const definition = catalog.definitions.find((entry) => entry.name === name)
  if (!definition) throw new TypeError(unknownDefinitionMessage(name, catalog.definitions.map((entry) => entry.name)))
  const unmatched = unmatchedTools(definition, globals)
  if (unmatched.length > 0) {
    throw new AgentDefinitionError(name, `agent definition "${name}" (${definition.source}): ${unmatched.join('; ')}`)
  }
  plan.setBaseline(baselineOf(definition))
}

/** The baseline fields of a definition: only those it sets. */
export function baselineOf(definition: AgentDefinition): SubagentBaseline {
  const baseline: SubagentBaseline = {}
  if (definition.persona !== '') baseline.persona = definition.persona
  const options: AgentOptions = {}
  if (definition.provider !== undefined) options.provider = definition.provider
  if (definition.model !== undefined) options.model = definition.model
  if (definition.maxTokens !== undefined) options.maxTokens = definition.maxTokens
  if (definition.maxSteps !== undefined) options.maxSteps = definition.maxSteps
  if (Object.keys(options).length > 0) baseline.agentOptions = options
  if (definition.outputSchema !== undefined) baseline.outputSchema = definition.outputSchema
  if (definition.tools !== undefined || definition.disallowedTools !== undefined) {
    const filter: { allow?: readonly string[]; deny?: readonly string[] } = {}
    if (definition.tools !== undefined) filter.allow = definition.tools
    if (definition.disallowedTools !== undefined) filter.deny = definition.disallowedTools
    baseline.toolFilter = filter
  }
  if (definition.maxDepth !== undefined) baseline.maxDepth = definition.maxDepth
  if (definition.budget !== undefined) baseline.budget = definition.budget
  if (definition.approval !== undefined) baseline.approval = definition.approval
  if (definition.background !== undefined) baseline.background = definition.background
  return baseline
}
