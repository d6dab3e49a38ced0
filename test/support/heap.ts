/**
 * Heap readings inside the test run: `--expose-gc` is set at run time (it reaches contexts made
 * afterwards), so `npm test` needs no extra flag. For deterministic byte counts only, never time.
 */
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'

let collect: (() => void) | undefined

/** `heapUsed` after three full collections and one event-loop turn (finalizers and weak maps settle). */
export async function heapAfterGc(): Promise<number> {
  if (!collect) {
    setFlagsFromString('--expose-gc')
    collect = runInNewContext('gc') as () => void
  }
  collect()
  collect()
  collect()
  await new Promise(setImmediate)
  return process.memoryUsage().heapUsed
}
