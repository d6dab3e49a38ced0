/**
 * Heap readings for the benchmarks: they need `node --expose-gc` (every `npm run bench*` script
 * passes it) and throw a clear error without it.
 */

const gc = (globalThis as { gc?: () => void }).gc

/** Three full collections and one event-loop turn, so finalizers and weak maps settle. */
export async function fullGc(): Promise<void> {
  if (!gc) throw new Error('run with --expose-gc')
  gc()
  gc()
  gc()
  await new Promise(setImmediate)
}

/** `heapUsed` after `fullGc()`. */
export async function heapAfterGc(): Promise<number> {
  await fullGc()
  return process.memoryUsage().heapUsed
}
