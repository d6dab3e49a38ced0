/**
 * Limits and outcome messages of a sandboxed run, shared by the host thread (`sandbox.ts`) and the
 * worker that runs the interpreter (`sandbox-run.ts`).
 */

export const DEFAULT_TIMEOUT_MS = 5000
export const DEFAULT_MEMORY_BYTES = 32 * 1024 * 1024
/** Smallest `memoryBytes` accepted: the prelude and a context need a few hundred KiB. */
export const MIN_MEMORY_BYTES = 1024 * 1024
/**
 * Largest `memoryBytes` accepted: an interpreter's 32-bit WebAssembly memory holds at most 4 GiB,
 * its 16 MiB base included; past it every run would fail to make its instance.
 */
export const MAX_MEMORY_BYTES = 4 * 1024 ** 3 - 16 * 1024 ** 2
/**
 * Interpreter stack. The interpreter's frames also use the thread's native stack, several times
 * over: this keeps ordinary runaway recursion a clean `stack limit` error well inside it.
 */
export const STACK_BYTES = 256 * 1024

/**
 * Binding calls of one run that execute on the host at once; later ones wait, first in first out,
 * for one to settle. Without a cap, a loop of un-awaited calls (`for (…) tools.x()`) starts tens of
 * thousands of host executions (each a full tool pipeline, a child agent for `subagent`) before
 * the time limit stops the program: memory and work the sandbox's own limits do not bound.
 */
export const MAX_CALLS_IN_FLIGHT = 32

/**
 * Default of `maxWaitingArgumentBytes`: the argument text (UTF-8 bytes) that the calls of one run
 * waiting for a place (`MAX_CALLS_IN_FLIGHT`) may hold together on the host. A program's un-awaited
 * calls with multi-MB arguments grew the host's memory by ≈ 100 MB a run at the default time limit,
 * and without bound with a long one; a call past the limit fails in the program instead.
 */
export const DEFAULT_WAITING_ARGUMENT_BYTES = 32 * 1024 * 1024

/** A binding call refused because the arguments waiting for a place would pass the limit. */
export function waitingArgumentsMessage(bytes: number, max: number): string {
  return `tool call refused: ${MAX_CALLS_IN_FLIGHT} calls are in flight and the arguments waiting for a place would reach ${bytes} bytes, over the limit of ${max}; await earlier calls before starting more`
}

/** Every message a failed run can carry; each is pinned by a test. */
export const sandboxMessages = {
  timeout: (ms: number): string => `run_code timed out after ${ms} ms`,
  memory: 'run_code exceeded its memory limit',
  stack: 'run_code exceeded its stack limit',
  aborted: 'run_code was aborted',
  notJson: (reason: string): string => `run_code result is not JSON: ${reason}`,
  fault: (reason: string): string => `run_code sandbox failed: ${reason}`,
} as const
