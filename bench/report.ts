/**
 * What every benchmark script ends with: one JSON line of figures on stdout (the machine-readable
 * summary), and a failure reported on stderr with exit code 1 instead of an unhandled rejection.
 */

/** Writes `figures` plus `node`, `quick` (when set) and `wall_s` since `startedAt` as one JSON line. */
export function printSummary(figures: Record<string, unknown>, startedAt: number, quick: boolean): void {
  const wall = Math.round((performance.now() - startedAt) / 100) / 10
  process.stdout.write(`${JSON.stringify({ ...figures, node: process.version, ...(quick ? { quick: true } : {}), wall_s: wall })}\n`)
}

/** Runs a benchmark's `main`; a throw or rejection is printed and ends the process with exit 1. */
export function runBenchmark(main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    process.exit(1)
  })
}
