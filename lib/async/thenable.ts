/**
 * Promise-likes as the language treats them. Plain code: no cordis, no I/O.
 */

/** True for a value with a callable `then`, which `await` and `Promise.resolve` adopt as a promise. */
export function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as PromiseLike<T> | null | undefined)?.then === 'function'
}
