/**
 * The `subagent` tool: what the parent model sees, and one delegation per call (SPEC §6).
 */
import { SubagentError } from '../../lib/errors.ts'
import type { JsonSchema, SubagentStartRequest, ToolDefinition, ToolExecution, ToolResult } from '../../lib/types.ts'
import type { InProcessRun } from '../inprocess-run/index.ts'
import { toToolResult } from './outcome.ts'

export const TOOL_NAME = 'subagent'

export const NO_CALLING_AGENT_MESSAGE = 'the subagent tool needs a calling agent'

/** The tool description the model sees, unless the plugin config overrides it. */
export const TOOL_DESCRIPTION =
  'Delegate a self-contained task to a subagent: a separate agent that works on it with its own ' +
  'conversation and tool calls, then returns only its final answer to you. Use it for work you can ' +
  'hand off whole (research, a focused sub-problem, anything whose intermediate steps you do not ' +
  'need to see). Write `prompt` as a complete brief: goal, relevant facts, constraints and the form ' +
  'of the answer you want. With the default mode `spawn` the subagent sees nothing of this ' +
  'conversation; with `fork` it starts from a copy of it up to your last completed turn (not the ' +
  'current one). The result is the subagent\'s final answer, or JSON matching `output_schema` when ' +
  'you give one. An error result says why the subagent did not finish, followed by any partial output.'

const toolNames = { type: 'array', items: { type: 'string' } }

/** The parameter schema the model sees. */
export const TOOL_PARAMETERS: JsonSchema = {
  type: 'object',
  properties: {
    prompt: {
      type: 'string',
      minLength: 1,
      description: 'The complete task for the subagent, as its only instructions from you.',
    },
    mode: {
      type: 'string',
      enum: ['spawn', 'fork'],
      description: '`spawn` (default): start from an empty conversation. `fork`: start from a copy of this conversation.',
    },
    label: { type: 'string', description: 'A short name for the task, shown in logs.' },
    output_schema: {
      type: 'object',
      description: 'A JSON Schema with root type `object`; the subagent must answer with a value matching it.',
    },
    persona: { type: 'string', description: 'System-prompt text that sets the subagent\'s role instead of the default one.' },
    tools: {
      type: 'object',
      properties: {
        allow: { ...toolNames, description: 'The only tools the subagent may use.' },
        deny: { ...toolNames, description: 'Tools the subagent may not use.' },
      },
      additionalProperties: false,
      description: 'Limits the tools the subagent sees, by tool name.',
    },
  },
  required: ['prompt'],
  additionalProperties: false,
}

/** Arguments as validated against `TOOL_PARAMETERS`. */
export interface SubagentToolArgs {
  prompt: string
  mode?: 'spawn' | 'fork'
  label?: string
  output_schema?: JsonSchema
  persona?: string
  tools?: { allow?: string[]; deny?: string[] }
}

export interface ToolOptions {
  description: string
  /** Passed as `maxDepth` on every start, when set. */
  maxDepth?: number
  /** The driver, read at call time. */
  driver(): InProcessRun
}

/** The start request for one call: the calling agent is the parent, the call's signal the signal. */
export function startRequest(args: SubagentToolArgs, exec: ToolExecution, maxDepth?: number): SubagentStartRequest {
  const parent = exec.agent
  if (!parent) throw new SubagentError('NO_CALLING_AGENT', NO_CALLING_AGENT_MESSAGE)
  const request: SubagentStartRequest = { parent, prompt: args.prompt, signal: exec.signal }
  if (args.label !== undefined) request.label = args.label
  if (args.persona !== undefined) request.persona = args.persona
  if (args.tools !== undefined) request.toolFilter = args.tools
  if (args.output_schema !== undefined) request.outputSchema = args.output_schema
  if (maxDepth !== undefined) request.maxDepth = maxDepth
  return request
}

/**
 * The tool definition. A start error propagates, so the host renders it `Error: <message>` and
 * keeps its `code`; once a run exists it is disposed before the call returns, on every path.
 */
export function subagentTool(options: ToolOptions): ToolDefinition {
  return {
    name: TOOL_NAME,
    description: options.description,
    parameters: TOOL_PARAMETERS,
    async execute(args: SubagentToolArgs, exec: ToolExecution): Promise<ToolResult> {
      const request = startRequest(args, exec, options.maxDepth)
      const driver = options.driver()
      const run = await (args.mode === 'fork' ? driver.fork(request) : driver.spawn(request))
      try {
        return toToolResult(await run.result)
      } finally {
        await run.dispose()
      }
    },
  }
}
