/**
 * The `structured_output` capture tool and the text the model sees (SPEC §3). The host validates
 * arguments against the requested schema before the body runs (`invalid arguments: <v1>; <v2>`,
 * code `INVALID_ARGS`), so the body only stages an already-valid value.
 */
import { toFrozenJson } from '../../lib/json-validation.ts'
import type { JsonSchema, ToolDefinition, ToolExecution, ToolResult } from '../../lib/types.ts'
import type { CaptureState } from './stage.ts'

export const STRUCTURED_OUTPUT_TOOL = 'structured_output'

export const STRUCTURED_OUTPUT_DESCRIPTION =
  "Report your final structured result. Call this exactly once, when your answer is complete; the arguments must match this tool's parameter schema exactly."

/** Name of the system prompt section the instruction is contributed as. */
export const STRUCTURED_OUTPUT_SECTION = 'tool:structured_output'

/** Order of that section: inside the tool guidance band, after general tool guidance. */
export const STRUCTURED_OUTPUT_ORDER = 190

export const STRUCTURED_OUTPUT_INSTRUCTION =
  'When you have your final answer, you MUST report it by calling the `structured_output` tool with arguments matching its parameter schema exactly. Do not finish with a plain text answer: only the tool call counts as your result.'

/** The text of a successful capture's result. */
export const RECORDED_TEXT = 'Structured output recorded.'

/**
 * The child's capture tool: `schema` (already checked against the subset) is its parameter schema
 * as given, never copied, so it must not be mutated after the start. The body stages a frozen JSON
 * copy of the arguments under its execution object and reports `{recorded: true}`.
 */
export function captureTool(schema: JsonSchema, state: CaptureState): ToolDefinition {
  return {
    name: STRUCTURED_OUTPUT_TOOL,
    description: STRUCTURED_OUTPUT_DESCRIPTION,
    parameters: schema,
    execute(args: never, exec: ToolExecution): ToolResult {
      state.stage(exec, toFrozenJson(args))
      return { isError: false, value: { recorded: true }, content: [{ type: 'text', text: RECORDED_TEXT }] }
    },
  }
}
