/**
 * Guards and restrictions of the tool registry: their checks at registration and how an agent's
 * restrictions hide global tools from it.
 */
import type { ToolGuard } from '../../../lib/types.ts'
import type { AgentScope } from '../scope.ts'

/** What `guardsOf` answers for an agent without guards of its own. */
export const noGuards: readonly ToolGuard[] = Object.freeze([])

/** Throws a `TypeError` naming the field of a malformed `restrict()` filter. */
export function assertFilter(filter: unknown): asserts filter is { allow?: readonly string[]; deny?: readonly string[] } {
  if (typeof filter !== 'object' || filter === null || Array.isArray(filter)) {
    throw new TypeError('tools.restrict() filter must be an object with allow and/or deny')
  }
  for (const key of ['allow', 'deny'] as const) {
    const names: unknown = (filter as Record<string, unknown>)[key]
    if (names !== undefined && (!Array.isArray(names) || names.some((name) => typeof name !== 'string'))) {
      throw new TypeError(`tools.restrict() filter ${key} must be an array of tool names`)
    }
  }
}

/** Throws a `TypeError` when `fn` is not a function. */
export function assertGuard(fn: unknown): asserts fn is ToolGuard {
  if (typeof fn !== 'function') throw new TypeError('tool guard must be a function')
}

/** Appends `fn` to the scope's guards; returns that list. */
export function addGuard(scope: AgentScope, fn: ToolGuard): ToolGuard[] {
  const existing = scope.guards
  if (existing) {
    existing.push(fn)
    return existing
  }
  // a literal of one: an empty array's first push reserves room for 17 guards
  return (scope.guards = [fn])
}

/** True when one of the agent's restrictions hides the global tool `name` from it. */
export function isRestricted(name: string, scope: AgentScope | undefined): boolean {
  if (!scope?.restrictions) return false
  for (const { allow, deny } of scope.restrictions) {
    if ((allow && !allow.has(name)) || deny?.has(name)) return true
  }
  return false
}
