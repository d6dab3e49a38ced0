/**
 * The `subagent` tool: what the parent model sees, and one delegation per call (SPEC §6).
 */
import { subscribeAbort } from '../../lib/async/abort-signal.ts'
import { SubagentError } from '../../lib/errors.ts'
import type { JsonSchema, SubagentCatalogEntry, SubagentRun, SubagentStartRequest, ToolDefinition, ToolExecution, ToolResult } from '../../lib/types.ts'
import { type Locale, text } from '../../locales/index.ts'
import type { InProcessRun } from '../inprocess-run/index.ts'
import { adoptBackgroundRun } from './background.ts'
import { toToolResult } from './outcome.ts'

export const TOOL_NAME = 'subagent'

export const NO_CALLING_AGENT_MESSAGE = 'the subagent tool needs a calling agent'

/** The tool description the model sees, unless the plugin config overrides it (`subagentTool.description`). */
export const TOOL_DESCRIPTION = text('en-US', 'subagentTool.description')

/**
 * The parameter schema the model sees, with its descriptions in `locale`; with `agents` (the
 * definitions a start may name, SPEC §12) also `agent`, an enum of their names.
 */
export function toolParameters(locale: Locale, agents: readonly SubagentCatalogEntry[] = []): JsonSchema {
  const describe = (name: string) => text(locale, `subagentTool.parameters.${name}`)
  const toolNames = { type: 'array', items: { type: 'string' } }
  return {
    type: 'object',
    properties: {
      prompt: { type: 'string', minLength: 1, description: describe('prompt') },
      mode: { type: 'string', enum: ['spawn', 'fork'], description: describe('mode') },
      label: { type: 'string', description: describe('label') },
      output_schema: { type: 'object', description: describe('outputSchema') },
      persona: { type: 'string', description: describe('persona') },
      tools: {
        type: 'object',
        properties: {
          allow: { ...toolNames, description: describe('allow') },
          deny: { ...toolNames, description: describe('deny') },
        },
        additionalProperties: false,
        description: describe('tools'),
      },
      background: { type: 'boolean', description: describe('background') },
      // absent while no definition exists: an empty enum would accept nothing
      ...(agents.length > 0 ? { agent: { type: 'string', enum: agents.map((entry) => entry.name), description: describe('agent') } } : {}),
    },
    required: ['prompt'],
    additionalProperties: false,
  }
}

/**
 * `description` followed by the definitions the model may name as `agent`, one
 * `- <name>: <description>` line each under a heading; `description` alone when there are none.
 */
export function describeWithAgents(description: string, locale: Locale, agents: readonly SubagentCatalogEntry[]): string {
  if (agents.length === 0) return description
  const lines = agents.map((entry) => `- ${entry.name}: ${entry.description.replace(/\s+/g, ' ').trim()}`)
  return `${description}\n\n${text(locale, 'subagentTool.agentsHeading')}\n${lines.join('\n')}`
}

/** The parameter schema the model sees in `en-US`. */
export const TOOL_PARAMETERS: JsonSchema = toolParameters('en-US')

/** Arguments as validated against `TOOL_PARAMETERS`. */
export interface SubagentToolArgs {
  prompt: string
  mode?: 'spawn' | 'fork'
  label?: string
  output_schema?: JsonSchema
  persona?: string
  tools?: { allow?: string[]; deny?: string[] }
  background?: boolean
  /** The name of an agent definition to start the subagent from. */
  agent?: string
}

export interface ToolOptions {
  description: string
  /** Language of the parameter descriptions and of the result text the model sees. */
  locale: Locale
  /** Passed as `maxDepth` on every start, when set. */
  maxDepth?: number
  /** The definitions offered as `agent` when the tool was registered (their `background` defaults). */
  agents?: readonly SubagentCatalogEntry[]
  /** The driver the calls start their runs with. */
  driver: InProcessRun
  /** Where a background run's delivery reports a fault that is not the run's own outcome. */
  report(error: unknown): void
}

/**
 * The start request for one call: the calling agent is the parent, `signal` (the call's own, or a
 * background run's) the signal. Throws `NO_CALLING_AGENT` without a calling agent.
 */
function startRequest(args: SubagentToolArgs, exec: ToolExecution, signal: AbortSignal, maxDepth?: number): SubagentStartRequest {
  const parent = exec.agent
  if (!parent) throw new SubagentError('NO_CALLING_AGENT', NO_CALLING_AGENT_MESSAGE)
  // a model must never reach through a child a tool it was denied (SPEC §8.3)
  const request: SubagentStartRequest = { parent, prompt: args.prompt, signal, inheritRestrictions: true, callId: exec.callId, execution: exec.token }
  if (args.label !== undefined) request.label = args.label
  if (args.persona !== undefined) request.persona = args.persona
  if (args.tools !== undefined) request.toolFilter = args.tools
  if (args.output_schema !== undefined) request.outputSchema = args.output_schema
  if (args.agent !== undefined) request.agent = args.agent
  if (maxDepth !== undefined) request.maxDepth = maxDepth
  return request
}

/**
 * The tool definition. A start error propagates, so the host renders it `Error: <message>` and
 * keeps its `code`. A foreground run is disposed before the call returns, on every path; a
 * background run is handed to its parent (`background.ts`) and the call returns the start text.
 */
export function subagentTool(options: ToolOptions): ToolDefinition {
  return {
    name: TOOL_NAME,
    description: options.description,
    parameters: options.locale === 'en-US' && !options.agents?.length ? TOOL_PARAMETERS : toolParameters(options.locale, options.agents),
    concurrent: true,
    async execute(args: SubagentToolArgs, exec: ToolExecution): Promise<ToolResult> {
      // a definition's `background` is the default; the call's own flag wins
      const background = args.background ?? (args.agent !== undefined ? options.agents?.find((entry) => entry.name === args.agent)?.background : undefined)
      if (background) return startInBackground(args, exec, options)
      const request = startRequest(args, exec, exec.signal, options.maxDepth)
      const run = await startRun(options.driver, args, request)
      try {
        return toToolResult(await run.result, options.locale)
      } finally {
        await run.dispose()
      }
    },
  }
}

function startRun(driver: InProcessRun, args: SubagentToolArgs, request: SubagentStartRequest): Promise<SubagentRun> {
  return args.mode === 'fork' ? driver.fork(request) : driver.spawn(request)
}

/**
 * A background call: the run gets a signal of its own, which nothing aborts once the start has
 * fulfilled (the run outlives the turn that started it). Until then the turn's signal aborts it:
 * a start that waits (in a tree budget's queue, in an async setup) must not hold a cancelled turn
 * open until a slot frees, nor start a child after the cancel.
 */
async function startInBackground(args: SubagentToolArgs, exec: ToolExecution, options: ToolOptions): Promise<ToolResult> {
  const own = new AbortController()
  const request = startRequest(args, exec, own.signal, options.maxDepth)
  const turn = exec.signal
  // an abort that already happened fires no event: the start then rejects as a foreground one would
  if (turn.aborted) own.abort(turn.reason)
  const unlink = subscribeAbort(turn, () => own.abort(turn.reason))
  let run: SubagentRun
  try {
    run = await startRun(options.driver, args, request)
  } finally {
    unlink()
  }
  const label = args.label ?? run.id
  adoptBackgroundRun(request.parent, run, label, options)
  const started = text(options.locale, 'subagentTool.background.started', { label, runId: run.id })
  return { isError: false, content: [{ type: 'text', text: started }] }
}
