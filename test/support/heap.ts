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

/** V8 intrinsics a test may need to place an object in the heap; compiled once. */
interface Intrinsics {
  inYoungGeneration(value: unknown): boolean
  deoptimize(fn: unknown): void
}

let intrinsics: Intrinsics | undefined

/**
 * V8's own answers, for what only the engine knows: whether `value` is in the young generation
 * (where a scavenge can collect it) and a way to make `fn`'s next call run as unoptimized code
 * (which honours V8's allocation hints that optimized code ignores). Native syntax is allowed
 * only while these two are compiled.
 */
function v8Intrinsics(): Intrinsics {
  if (!intrinsics) {
    setFlagsFromString('--allow-natives-syntax')
    try {
      const made = runInNewContext('({ inYoungGeneration: (v) => %InYoungGeneration(v), deoptimize: (f) => %DeoptimizeFunction(f) })') as Intrinsics
      // V8 compiles a function body at its first call: each is called once while the flag is on
      made.inYoungGeneration({})
      made.deoptimize(() => undefined)
      intrinsics = made
    } finally {
      setFlagsFromString('--no-allow-natives-syntax')
    }
  }
  return intrinsics
}

/** Whether V8 holds `value` in the young generation (a fresh object is there unless V8 pretenured it). */
export function inYoungGeneration(value: object): boolean {
  return v8Intrinsics().inYoungGeneration(value)
}

/** Makes `fn`'s next call run as unoptimized code, as it does in a process's first thousands of calls. */
export function deoptimize(fn: (...args: never[]) => unknown): void {
  v8Intrinsics().deoptimize(fn)
}
