/**
 * The `structured_output` capture tool and the text the model sees (SPEC §3). The host validates
 * arguments against the requested schema before the body runs (`invalid arguments: <v1>; <v2>`,
 * code `INVALID_ARGS`), so the body only stages an already-valid value.
 */
import { type ErrorCode, SubagentError } from '../../lib/errors.ts'
import { frozenJsonWithin, JsonDepthError } from '../../lib/json/frozen-json.ts'
import { formatInvalidArguments } from '../../lib/schema/json-validation.ts'
import type { Agent, ContentBlock, JsonSchema, JsonValue, ToolDefinition, ToolExecution, ToolResult } from '../../lib/types.ts'
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

/** What the model reads in one locale, looked up once per locale instead of once per child. */
export interface CaptureTexts {
  readonly description: string
  readonly instruction: string
  readonly recorded: string
  readonly notRecordedConcurrently: string
  readonly notRecordedAfterFailure: string
}

const textsByLocale = new Map<Locale, CaptureTexts>()

/** The capture texts of `locale` (`structuredOutput.*`), frozen and shared. */
export function captureTexts(locale: Locale): CaptureTexts {
  let texts = textsByLocale.get(locale)
  if (texts === undefined) {
    texts = Object.freeze({
      description: text(locale, 'structuredOutput.description'),
      instruction: text(locale, 'structuredOutput.instruction'),
      recorded: text(locale, 'structuredOutput.recorded'),
      notRecordedConcurrently: notRecordedConcurrently(locale),
      notRecordedAfterFailure: notRecordedAfterFailure(locale),
    })
    textsByLocale.set(locale, texts)
  }
  return texts
}

/** Finds the capture state of the agent a call was made for (`undefined`: not a structured child). */
export type StateOf = (agent: Agent | undefined) => CaptureState | undefined

/**
 * The body every capture tool shares: the host validated the arguments against the schema, so it
 * stages a frozen JSON copy of them under its execution object and reports `{recorded: true}`; a
 * capture it cannot record (another in flight, or its enclosing program already failed) is an
 * error result with code `NOT_RECORDED`. Throws (an error result, from the host) for a call made
 * for an agent that has no capture, which a tool scoped to a structured child never sees.
 */
export function captureBody(stateOf: StateOf, texts: CaptureTexts): (args: never, exec: ToolExecution) => ToolResult {
  // the host copies what a body returns into the result it reports, so one frozen success serves
  // every capture of this plugin instance
  const content: ContentBlock[] = [Object.freeze({ type: 'text', text: texts.recorded })]
  Object.freeze(content)
  const recorded: ToolResult = { isError: false, value: RECORDED_VALUE, content }
  Object.freeze(recorded)
  return (args, exec) => {
    const state = stateOf(exec.agent)
    if (state === undefined) throw new SubagentError('TOOL_FAILED', `${STRUCTURED_OUTPUT_TOOL} was called for an agent started without an output schema`)
    // decided here, while the result can still tell the model: concurrent nested captures
    // (`Promise.all` in Code Mode) would otherwise all report success and all but one be dropped
    let value: JsonValue
    try {
      // the host hands a body its arguments as a deep-frozen JSON copy (SPEC §1.5): measured, not copied
      value = frozenJsonWithin(args, MAX_VALUE_DEPTH)
    } catch (error) {
      if (!(error instanceof JsonDepthError)) throw error
      const message = formatInvalidArguments([error.message])
      return { isError: true, content: [{ type: 'text', text: `Error: ${message}` }], code: 'INVALID_ARGS' }
    }
    const decision = state.decide(exec)
    if (decision === 'busy') return notRecorded(texts.notRecordedConcurrently)
    if (decision === 'failed') return notRecorded(texts.notRecordedAfterFailure)
    state.stage(exec, value)
    return recorded
  }
}

// the value of every successful capture's result
const RECORDED_VALUE: JsonValue = Object.freeze({ recorded: true })

/**
 * A capture tool definition: `schema` (already checked against the subset, and frozen: the schema
 * cache's copy) is its parameter schema as given. Definitions carry no state of
 * their own (`execute` finds the child's through `exec.agent`), so one serves every child with the
 * same schema.
 */
export function captureTool(schema: JsonSchema, execute: ToolDefinition['execute'], texts: CaptureTexts): ToolDefinition {
  return { name: STRUCTURED_OUTPUT_TOOL, description: texts.description, parameters: schema, execute }
}
