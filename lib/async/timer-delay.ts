/**
 * The longest delay Node's timers keep. A longer one (2^31 ms and up, ≈ 24.8 days) is replaced by
 * 1 ms with a `TimeoutOverflowWarning`: a configured timeout past it would fire at once.
 */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1

/**
 * True for a timeout a Node timer keeps as given: a positive number of at most
 * `MAX_TIMER_DELAY_MS`. False for zero, a negative number, `NaN` and `Infinity`.
 */
export function isTimerDelay(ms: number): boolean {
  return ms > 0 && ms <= MAX_TIMER_DELAY_MS
}
