/**
 * "Did you mean …?" for a mistyped name: the known name nearest to the typed one.
 */

/** Edit distance (insertions, deletions, substitutions, adjacent swaps) between `a` and `b`. */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i])
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, rows[i - 2]![j - 2]! + 1)
      rows[i]![j] = best
    }
  }
  return rows[a.length]![b.length]!
}

/**
 * The name in `known` closest to `typed`, or `undefined` when none is close enough to be a likely
 * typo. Case is ignored when measuring (a wrong case is the most common slip, `maxdepth` for
 * `maxDepth`); up to a third of the typed name's characters may differ. Ties go to the earlier name.
 */
export function closestName(typed: string, known: Iterable<string>): string | undefined {
  const lower = typed.toLowerCase()
  const allowed = Math.max(1, Math.floor(typed.length / 3))
  let best: string | undefined
  let bestDistance = Number.POSITIVE_INFINITY
  for (const name of known) {
    const distance = editDistance(lower, name.toLowerCase())
    if (distance <= allowed && distance < bestDistance) {
      best = name
      bestDistance = distance
    }
  }
  return best
}
