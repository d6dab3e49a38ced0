/**
 * How a settled run reaches the parent model (SPEC §6): a completed result as its text or its
 * structured value, anything else as an error headed by the stop reason.
 */
import type { ErrorCode } from '../../lib/errors.ts'
import type { ContentBlock, StopReason, SubagentResult, ToolResult } from '../../lib/types.ts'
import { diagnosticIn, type Locale, text } from '../../locales/index.ts'

export type IncompleteReason = Exclude<StopReason, 'completed'>

// SPEC §6's headings, from `subagentTool.heading.*` in locales/en-US.yml
export const CANCELLED_HEADING = text('en-US', 'subagentTool.heading.aborted')
export const FAILED_HEADING = text('en-US', 'subagentTool.heading.error')
export const TOKEN_LIMIT_HEADING = text('en-US', 'subagentTool.heading.max-tokens')
export const DECLINED_HEADING = text('en-US', 'subagentTool.heading.refusal')
export const BUDGET_HEADING = text('en-US', 'subagentTool.heading.budget')

/** The first line of the error text in `en-US`, per stop reason. */
export const incompleteHeadings: Readonly<Record<IncompleteReason, string>> = Object.freeze({
  aborted: CANCELLED_HEADING,
  error: FAILED_HEADING,
  'max-tokens': TOKEN_LIMIT_HEADING,
  refusal: DECLINED_HEADING,
  budget: BUDGET_HEADING,
})

/** The `code` of the error result, per stop reason, to route on without reading the text. */
export const incompleteCodes: Readonly<Record<IncompleteReason, ErrorCode>> = Object.freeze({
  aborted: 'SUBAGENT_CANCELLED',
  error: 'SUBAGENT_FAILED',
  'max-tokens': 'SUBAGENT_MAX_TOKENS',
  refusal: 'SUBAGENT_DECLINED',
  budget: 'SUBAGENT_BUDGET',
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
 * `locale` selects the heading, the labels and the diagnostic (rendered from `diagnosticText`);
 * the `Error: ` prefix is the host's and stays as it is.
 */
export function toToolResult(result: SubagentResult, locale: Locale = 'en-US'): ToolResult {
  if (result.stopReason === 'completed') {
    if (result.structured !== undefined) {
      return { isError: false, content: [{ type: 'text', text: JSON.stringify(result.structured) }], value: result.structured }
    }
    return { isError: false, content: [{ type: 'text', text: outputText(result.output) }] }
  }
  const reason: IncompleteReason = result.stopReason in incompleteHeadings ? result.stopReason : 'error'
  let message = `Error: ${text(locale, `subagentTool.heading.${reason}`)}`
  const diagnostic = diagnosticIn(result, locale)
  if (diagnostic) message += `\n${text(locale, 'subagentTool.diagnostic', { diagnostic })}`
  const partial = outputText(result.output)
  if (partial) message += `\n${text(locale, 'subagentTool.partialOutput', { output: partial })}`
  return { isError: true, content: [{ type: 'text', text: message }], code: incompleteCodes[reason] }
}
