/**
 * The monotonic tool guard (SPEC §3): once a child's structured value is committed, or a nested
 * commit is pending, every later tool call of that child is denied. Host guards run after the whole
 * `tools/pre-execute` waterfall, so no listener can let such a call through.
 */
import type { ToolGuard } from '../../lib/types.ts'
import { type Locale, text } from '../../locales/index.ts'
import type { StateOf } from './capture-tool.ts'

/**
 * The deny reason for a call of `tool` after the capture (`structuredOutput.alreadyRecorded`); the
 * host renders it `Error: <reason>`.
 */
export function alreadyRecorded(tool: string, locale: Locale = 'en-US'): string {
  return text(locale, 'structuredOutput.alreadyRecorded', { tool })
}

/**
 * The guard every structured child shares, reading the state of the agent the call is for. Calls
 * that started before the commit (earlier in the same response) are past their guard and
 * unaffected. A pending nested commit that its enclosing execution discards lifts the lock again,
 * since nothing was recorded; a commit never does.
 */
export function captureGuard(stateOf: StateOf, locale: Locale = 'en-US'): ToolGuard {
  return (exec) => (stateOf(exec.agent)?.isLocked ? alreadyRecorded(exec.name, locale) : undefined)
}
