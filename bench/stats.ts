/** The order statistics every benchmark reports, as ../shared/BENCH.md defines them. */

/** Percentile `p` of ascending `sorted` samples: `sorted[ceil(p/100 · n) − 1]`. */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.ceil((p / 100) * sorted.length) - 1]!
}

/** The 50th percentile of `values`, in any order (they are not sorted in place). */
export function median(values: readonly number[]): number {
  return percentile([...values].sort((a, b) => a - b), 50)
}
