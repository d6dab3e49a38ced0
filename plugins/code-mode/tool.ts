/**
 * The `run_code` tool: what the model sees, and one sandboxed program per call whose `tools.<name>`
 * bindings re-enter the host's `execute` as nested calls (SPEC §1.5, Code Mode).
 */
import { SubagentError } from '../../lib/errors.ts'
import type { ContentBlock, JsonSchema, JsonValue, ToolDefinition, ToolExecution, ToolResult } from '../../lib/types.ts'
import type { Tools } from '../host/index.ts'
import { runSandboxed, type SandboxBinding } from './sandbox.ts'

export const TOOL_NAME = 'run_code'

export interface RunCodeLimits {
  timeoutMs: number
  memoryBytes: number
}

function seconds(ms: number): string {
  const value = ms / 1000
  return `${Number.isInteger(value) ? value : value.toFixed(1)} second${value === 1 ? '' : 's'}`
}

/** The tool description the model sees, with the configured limits in it. */
export function describeRunCode(limits: RunCodeLimits): string {
  const mebibytes = Math.round(limits.memoryBytes / (1024 * 1024))
  return (
    'Run a JavaScript program in a sandbox and get back the value it returns. The program is the body ' +
    'of an async function. Every other tool you can use is available inside it as an async function: ' +
    '`await tools.<name>(args)` takes the same arguments object as the tool and resolves with its ' +
    'result (parsed JSON when the tool returns data, otherwise its text), or throws an Error with the ' +
    "tool's error message (write `tools['a-b'](args)` for a name with a hyphen). End with " +
    "`return <value>`: the value, as JSON, is this tool's result. Use it " +
    'to make several tool calls in one step, in parallel with `Promise.all`, and to filter or combine ' +
    'their results before they reach you. The sandbox has no network, files, `require`, `process` or ' +
    `timers, and \`console.log\` output is discarded. A program may run for ${seconds(limits.timeoutMs)} ` +
    `(tool calls included) and use ${mebibytes} MiB of memory.`
  )
}

/** The parameter schema the model sees. */
export const TOOL_PARAMETERS: JsonSchema = {
  type: 'object',
  properties: {
    code: {
      type: 'string',
      description:
        'The body of an async JavaScript function, e.g. `const r = await tools.search({q: "x"}); return r.hits`.',
    },
  },
  required: ['code'],
  additionalProperties: false,
}

export interface RunCodeArgs {
  code: string
}

/** The text blocks of a result, joined by newlines. */
function textOf(content: readonly ContentBlock[]): string {
  return content
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join('\n')
}

/** A nested call's error result, as the program sees it: the message without `Error: `. */
function callError(result: ToolResult): Error {
  const message = textOf(result.content).replace(/^Error: /, '')
  return result.code ? new SubagentError(result.code, message) : new Error(message)
}

/**
 * One binding per tool the calling agent sees, except `run_code` itself. Each call is a nested
 * `execute` with `parent` = the outer token; it stops when the outer call or the program ends.
 */
export function bindingsFor(tools: Tools, exec: ToolExecution): Record<string, SandboxBinding> {
  const bindings: Record<string, SandboxBinding> = Object.create(null)
  for (const { name } of tools.schemas(exec.agent)) {
    if (name === TOOL_NAME) continue
    bindings[name] = async (args, signal) => {
      const result = await tools.execute({
        name,
        arguments: args,
        agent: exec.agent,
        parent: exec.token,
        signal: AbortSignal.any([exec.signal, signal]),
      })
      if (result.isError) throw callError(result)
      return result.value !== undefined ? result.value : textOf(result.content)
    }
  }
  return bindings
}

/**
 * The tool definition. A program that returns a value makes a successful result with that value;
 * any failure of the program (a throw, a limit, an abort) throws, code `SANDBOX`.
 */
export function runCodeTool(tools: Tools, limits: RunCodeLimits): ToolDefinition {
  return {
    name: TOOL_NAME,
    description: describeRunCode(limits),
    parameters: TOOL_PARAMETERS,
    async execute(args: RunCodeArgs, exec: ToolExecution): Promise<JsonValue | undefined> {
      const outcome = await runSandboxed({
        code: args.code,
        bindings: bindingsFor(tools, exec),
        timeoutMs: limits.timeoutMs,
        memoryBytes: limits.memoryBytes,
        signal: exec.signal,
      })
      // the host renders a failure as `Error: <message>`: a plain Error's own prefix would double it
      if (!outcome.ok) throw new SubagentError('SANDBOX', outcome.error.replace(/^Error: /, ''))
      return outcome.value
    },
  }
}
