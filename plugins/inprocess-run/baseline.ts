/**
 * A start's baseline (SPEC §12, `subagent/define`): what a definition sets before the request's
 * own fields apply. The driver merges the fields it serves here; `outputSchema`, `budget` and
 * `approval` are merged by the plugins that serve them.
 */
import { expandToolPatterns, isToolPrefix } from '../../lib/agent-definition/tool-patterns.ts'
import type { SubagentBaseline } from '../../lib/types.ts'

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isNameList(value: unknown): value is readonly string[] {
  return Array.isArray(value) && value.every((name) => typeof name === 'string')
}

/**
 * `fields` over `current`, frozen. Throws `TypeError` `subagent baseline <field> must be …` for a
 * field of the wrong type among those the driver serves.
 */
export function mergeBaseline(current: Readonly<SubagentBaseline> | undefined, fields: SubagentBaseline): Readonly<SubagentBaseline> {
  if (!isRecord(fields)) throw new TypeError('subagent baseline must be an object')
  const { persona, agentOptions, toolFilter, background } = fields
  if (persona !== undefined && typeof persona !== 'string') throw new TypeError('subagent baseline persona must be a string')
  if (agentOptions !== undefined && !isRecord(agentOptions)) throw new TypeError('subagent baseline agentOptions must be an object')
  if (background !== undefined && typeof background !== 'boolean') throw new TypeError('subagent baseline background must be a boolean')
  if (toolFilter !== undefined) {
    if (!isRecord(toolFilter)) throw new TypeError('subagent baseline toolFilter must be an object')
    for (const key of ['allow', 'deny'] as const) {
      if (toolFilter[key] !== undefined && !isNameList(toolFilter[key])) {
        throw new TypeError(`subagent baseline toolFilter.${key} must be an array of tool names`)
      }
    }
  }
  return Object.freeze({ ...current, ...fields })
}

/**
 * The baseline's tool filter with its prefixes (`mcp__github__*`) expanded against `globals` (the
 * global tools that exist at start); exact names stay, so `restrict` rejects one that does not
 * exist. A prefix that matches nothing allows nothing: it never widens.
 */
export function expandedToolFilter(
  filter: NonNullable<SubagentBaseline['toolFilter']>,
  globals: readonly string[],
): { allow?: string[]; deny?: string[] } {
  const expand = (patterns: readonly string[]) => {
    const names = new Set<string>()
    for (const pattern of patterns) {
      if (!isToolPrefix(pattern)) names.add(pattern)
      else for (const name of expandToolPatterns([pattern], globals).names) names.add(name)
    }
    return [...names]
  }
  const expanded: { allow?: string[]; deny?: string[] } = {}
  if (filter.allow !== undefined) expanded.allow = expand(filter.allow)
  if (filter.deny !== undefined) expanded.deny = expand(filter.deny)
  return expanded
}
