/**
 * The durable record of background children in a parent's session (SPEC §8.2): which runs were
 * started and which results were handed over, so a resumed log tells which ones were interrupted.
 */
import type { SessionEvent } from './types.ts'

/** Appended to the parent's session when a background run starts: `{runId, label}`. */
export const BACKGROUND_START_EVENT = 'subagent/background-start'
/** Appended to the parent's session right after the run's result message was handed over: `{runId}`. */
export const BACKGROUND_DELIVERED_EVENT = 'subagent/background-delivered'

export interface BackgroundStartData {
  runId: string
  label: string
}

export interface BackgroundDeliveredData {
  runId: string
}

/**
 * Background runs the log started but never delivered, in start order: interrupted, when the log
 * belongs to a parent that is no longer running them (resumed after a restart, or disposed).
 */
export function interruptedBackgroundRuns(events: readonly SessionEvent[]): BackgroundStartData[] {
  const started = new Map<string, BackgroundStartData>()
  for (const event of events) {
    if (event.type === BACKGROUND_START_EVENT) {
      const { runId, label } = event.data as BackgroundStartData
      started.set(runId, { runId, label })
    } else if (event.type === BACKGROUND_DELIVERED_EVENT) {
      started.delete((event.data as BackgroundDeliveredData).runId)
    }
  }
  return [...started.values()]
}
