/**
 * How one model step's tool calls are grouped for execution (SPEC §8.1). Plain code: the host
 * runs each batch and decides what "concurrent" means for a call.
 */

/**
 * Yields the step's calls as batches, in model order: each maximal run of consecutive calls for
 * which `isConcurrent` is true is one batch; every other call is a batch of its own (a barrier).
 * Lazy: a batch is formed only when the consumer asks for it, so `isConcurrent` sees the tools as
 * they are once every earlier batch has run. A call that ended the previous run is asked again.
 */
export function* toolCallBatches<T>(calls: readonly T[], isConcurrent: (call: T) => boolean): Generator<T[], void, undefined> {
  let start = 0
  while (start < calls.length) {
    let end = start + 1
    if (isConcurrent(calls[start])) {
      while (end < calls.length && isConcurrent(calls[end])) end++
    }
    yield calls.slice(start, end)
    start = end
  }
}
