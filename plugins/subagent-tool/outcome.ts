/**
 * How a settled run reaches the parent model (SPEC §6): a completed result as its text or its
 * structured value, anything else as an error headed by the stop reason.
 */
import type { ContentBlock, StopReason, SubagentResult, ToolResult } from '../../lib/types.ts'

export type IncompleteReason = Exclude<StopReason, 'completed'>

export const CANCELLED_HEADING = 'subagent run was cancelled'
export const FAILED_HEADING = 'subagent run failed'
export const TOKEN_LIMIT_HEADING = 'subagent run hit its token limit before finishing'
export const DECLINED_HEADING = 'subagent declined the task'

/** The first line of the error text, per stop reason. */
export const incompleteHeadings: Readonly<Record<IncompleteReason, string>> = Object.freeze({
  aborted: CANCELLED_HEADING,
  error: FAILED_HEADING,
  'max-tokens': TOKEN_LIMIT_HEADING,
  refusal: DECLINED_HEADING,
})

/** The `code` of the error result, per stop reason, to route on without reading the text. */
export const incompleteCodes: Readonly<Record<IncompleteReason, string>> = Object.freeze({
  aborted: 'SUBAGENT_CANCELLED',
  error: 'SUBAGENT_FAILED',
  'max-tokens': 'SUBAGENT_MAX_TOKENS',
  refusal: 'SUBAGENT_DECLINED',
})

/** The text blocks of `content` joined with `\n`; reasoning and tool calls are left out. */
export function outputText(content: readonly ContentBlock[]): string {
  const parts: string[] = []
  for (const block of content) if (block.type === 'text') parts.push(block.text)
  return parts.join('\n')
}

/**
 * The tool result for one settled run. Completed: the structured value as JSON text (and as
 * `value`) when set, else the output text. Otherwise an error whose only content is
 * `Error: <heading>`, then `\nDiagnostic: <d>` and `\nPartial output before the run ended:\n<text>`
 * when present — the host's `Error: <message>` convention, with the heading and details as message.
 */
export function toToolResult(result: SubagentResult): ToolResult {
  if (result.stopReason === 'completed') {
    if (result.structured !== undefined) {
      return { isError: false, content: [{ type: 'text', text: JSON.stringify(result.structured) }], value: result.structured }
    }
    return { isError: false, content: [{ type: 'text', text: outputText(result.output) }] }
  }
  const reason: IncompleteReason = result.stopReason in incompleteHeadings ? result.stopReason : 'error'
  let text = `Error: ${incompleteHeadings[reason]}`
  if (result.diagnostic) text += `\nDiagnostic: ${result.diagnostic}`
  const partial = outputText(result.output)
  if (partial) text += `\nPartial output before the run ended:\n${partial}`
  return { isError: true, content: [{ type: 'text', text }], code: incompleteCodes[reason] }
}
