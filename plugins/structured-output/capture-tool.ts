/**
 * The `structured_output` capture tool and the text the model sees (SPEC §3). The host validates
 * arguments against the requested schema before the body runs (`invalid arguments: <v1>; <v2>`,
 * code `INVALID_ARGS`), so the body only stages an already-valid value.
 */
import type { ErrorCode } from '../../lib/errors.ts'
import { formatInvalidArguments, JsonDepthError, toFrozenJson } from '../../lib/json-validation.ts'
import type { JsonSchema, JsonValue, ToolDefinition, ToolExecution, ToolResult } from '../../lib/types.ts'
import { type Locale, text } from '../../locales/index.ts'
import type { CaptureState } from './stage.ts'

export const STRUCTURED_OUTPUT_TOOL = 'structured_output'

/** The tool description (`structuredOutput.description` in `locales/en-US.yml`). */
export const STRUCTURED_OUTPUT_DESCRIPTION = text('en-US', 'structuredOutput.description')

/** Name of the system prompt section the instruction is contributed as. */
export const STRUCTURED_OUTPUT_SECTION = 'tool:structured_output'

/** Order of that section: inside the tool guidance band, after general tool guidance. */
export const STRUCTURED_OUTPUT_ORDER = 190

/** The system prompt instruction (`structuredOutput.instruction` in `locales/en-US.yml`). */
export const STRUCTURED_OUTPUT_INSTRUCTION = text('en-US', 'structuredOutput.instruction')

/** The text of a successful capture's result (`structuredOutput.recorded`). */
export const RECORDED_TEXT = text('en-US', 'structuredOutput.recorded')

/** Code of a capture the body refused to record (`Error: structured output not recorded: …`). */
export const NOT_RECORDED = 'NOT_RECORDED' satisfies ErrorCode

/** Why a capture made while another one is in flight was not recorded (`structuredOutput.notRecordedConcurrently`). */
export function notRecordedConcurrently(locale: Locale = 'en-US'): string {
  return text(locale, 'structuredOutput.notRecordedConcurrently')
}

/** Why a capture whose enclosing program already failed was not recorded (`structuredOutput.notRecordedAfterFailure`). */
export function notRecordedAfterFailure(locale: Locale = 'en-US'): string {
  return text(locale, 'structuredOutput.notRecordedAfterFailure')
}

/**
 * Deepest nesting of objects and arrays a structured value may have (the root is level 1), the
 * same bound as the schema's. Checked where the value enters, so a deeper one cannot reach code
 * that recurses over it (rendering it as JSON, for one) and overflow the stack there.
 */
export const MAX_VALUE_DEPTH = 64

function notRecorded(reason: string): ToolResult {
  return { isError: true, content: [{ type: 'text', text: `Error: ${reason}` }], code: NOT_RECORDED }
}

/**
 * The child's capture tool: `schema` (already checked against the subset) is its parameter schema
 * as given, never copied, so it must not be mutated after the start. The body stages a frozen JSON
 * copy of the arguments under its execution object and reports `{recorded: true}`; a capture it
 * cannot record (another in flight, or its enclosing program already failed) is an error result
 * with code `NOT_RECORDED`. `locale` selects the description and the texts the model sees.
 */
export function captureTool(schema: JsonSchema, state: CaptureState, locale: Locale = 'en-US'): ToolDefinition {
  const recorded = text(locale, 'structuredOutput.recorded')
  return {
    name: STRUCTURED_OUTPUT_TOOL,
    description: text(locale, 'structuredOutput.description'),
    parameters: schema,
    execute(args: never, exec: ToolExecution): ToolResult {
      // decided here, while the result can still tell the model: concurrent nested captures
      // (`Promise.all` in Code Mode) would otherwise all report success and all but one be dropped
      let value: JsonValue
      try {
        value = toFrozenJson(args, MAX_VALUE_DEPTH)
      } catch (error) {
        if (!(error instanceof JsonDepthError)) throw error
        const message = formatInvalidArguments([error.message])
        return { isError: true, content: [{ type: 'text', text: `Error: ${message}` }], code: 'INVALID_ARGS' }
      }
      const decision = state.decide(exec)
      if (decision === 'busy') return notRecorded(notRecordedConcurrently(locale))
      if (decision === 'failed') return notRecorded(notRecordedAfterFailure(locale))
      state.stage(exec, value)
      return { isError: false, value: { recorded: true }, content: [{ type: 'text', text: recorded }] }
    },
  }
}
