/**
 * Tool names and prefixes (`mcp__github__*`) as agent definitions list them, against the tools
 * that exist. Pure.
 */

/** True for a prefix pattern: it ends in `*`. */
export function isToolPrefix(pattern: string): boolean {
  return pattern.endsWith('*')
}

/**
 * The names in `available` that `patterns` select (exact names, or every name starting with a
 * prefix's text before its `*`), sorted and without duplicates, and the patterns that select
 * none of them. Never widens: a pattern matching nothing selects nothing.
 */
export function expandToolPatterns(patterns: readonly string[], available: readonly string[]): { names: string[]; unmatched: string[] } {
  const names = new Set<string>()
  const unmatched: string[] = []
  for (const pattern of patterns) {
    let matched = false
    if (isToolPrefix(pattern)) {
      const prefix = pattern.slice(0, -1)
      for (const name of available) {
        if (name.startsWith(prefix)) {
          names.add(name)
          matched = true
        }
      }
    } else if (available.includes(pattern)) {
      names.add(pattern)
      matched = true
    }
    if (!matched) unmatched.push(pattern)
  }
  return { names: [...names].sort(), unmatched }
}
