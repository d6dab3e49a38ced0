/**
 * The durable record of background children in a parent's session (SPEC §8.2): which runs were
 * started and which results were handed over, so a resumed log tells which ones were interrupted.
 */
import type { SessionEvent } from '../types.ts'

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

/** A record's `runId` and `label` when they are strings (the plugin wrote it), else `undefined`. */
function fieldsOf(data: unknown): Partial<BackgroundStartData> | undefined {
  if (typeof data !== 'object' || data === null) return undefined
  const { runId, label } = data as Record<string, unknown>
  return typeof runId === 'string' ? { runId, label: typeof label === 'string' ? label : undefined } : undefined
}

/**
 * Background runs the log started but never delivered, in start order: interrupted, when the log
 * belongs to a parent that is no longer running them (resumed after a restart, or disposed). A
 * malformed record (a log read back from a file) is skipped. Never throws.
 */
export function interruptedBackgroundRuns(events: readonly SessionEvent[]): BackgroundStartData[] {
  const started = new Map<string, BackgroundStartData>()
  for (const event of events) {
    if (event.type === BACKGROUND_START_EVENT) {
      const fields = fieldsOf(event.data)
      if (fields?.runId !== undefined && fields.label !== undefined) started.set(fields.runId, { runId: fields.runId, label: fields.label })
    } else if (event.type === BACKGROUND_DELIVERED_EVENT) {
      const fields = fieldsOf(event.data)
      if (fields?.runId !== undefined) started.delete(fields.runId)
    }
  }
  return [...started.values()]
}
