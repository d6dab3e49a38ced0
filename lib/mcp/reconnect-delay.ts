/**
 * How long `McpTools` waits before connecting to a server again: doubling from the first delay
 * after each failed attempt, never past the longest. Pure.
 */

/**
 * The delay before attempt `failures + 1`, after `failures` (≥ 1) failed or lost connections in a
 * row: `first · 2^(failures − 1)`, at most `longest` (and at least 0).
 */
export function reconnectDelay(failures: number, first: number, longest: number): number {
  const doublings = Math.max(0, Math.min(failures - 1, 30))
  return Math.max(0, Math.min(longest, first * 2 ** doublings))
}
