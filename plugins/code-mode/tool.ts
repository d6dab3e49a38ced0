/**
 * The `run_code` tool: what the model sees, and one sandboxed program per call whose `tools.<name>`
 * bindings re-enter the host's `execute` as nested calls (SPEC §1.5, Code Mode).
 */
import { textOf } from '../../lib/content.ts'
import { SubagentError } from '../../lib/errors.ts'
import { type Locale, text } from '../../locales/index.ts'
import type { JsonSchema, JsonValue, ToolDefinition, ToolExecution, ToolResult } from '../../lib/types.ts'
import type { Tools } from '../host/index.ts'
import { runSandboxed, type SandboxBinding } from './sandbox.ts'
import type { SandboxPool } from './worker-pool.ts'
import { ToolCallError } from './errors.ts'

export const TOOL_NAME = 'run_code'

export interface RunCodeLimits {
  timeoutMs: number
  memoryBytes: number
  /** See `SandboxOptions.maxWaitingArgumentBytes`; the sandbox's default when absent. */
  maxWaitingArgumentBytes?: number
}

/** The tool description the model sees, with the configured limits in it, in `locale`. */
export function describeRunCode(limits: RunCodeLimits, locale: Locale = 'en-US'): string {
  const value = limits.timeoutMs / 1000
  const n = Number.isInteger(value) ? String(value) : value.toFixed(1)
  const duration = text(locale, value === 1 ? 'codeMode.duration.one' : 'codeMode.duration.other', { n })
  return text(locale, 'codeMode.description', { duration, mebibytes: Math.round(limits.memoryBytes / (1024 * 1024)) })
}

/** The parameter schema the model sees, in `locale`. */
export function toolParameters(locale: Locale = 'en-US'): JsonSchema {
  return {
    type: 'object',
    properties: { code: { type: 'string', description: text(locale, 'codeMode.code') } },
    required: ['code'],
    additionalProperties: false,
  }
}

/** The parameter schema in English. */
export const TOOL_PARAMETERS: JsonSchema = toolParameters()

export interface RunCodeArgs {
  code: string
}

/** A nested call's error result, as the program sees it: the message without `Error: `. */
function callError(result: ToolResult): ToolCallError {
  return new ToolCallError(textOf(result.content).replace(/^Error: /, ''), result.code || undefined)
}

/**
 * One binding per tool the calling agent sees, except `run_code` itself. Each call is a nested
 * `execute` with `parent` = the outer token; its signal aborts when the outer call's does or the
 * run is stopped.
 */
export function bindingsFor(tools: Tools, exec: ToolExecution): Record<string, SandboxBinding> {
  const bindings: Record<string, SandboxBinding> = Object.create(null)
  for (const { name } of tools.schemas(exec.agent)) {
    if (name === TOOL_NAME) continue
    // made by a call, not written here: V8 pretenures a function literal stored straight into a
    // property from unoptimized code, and the old-space binding would keep this call's objects
    // alive across scavenges until the next full GC (host README)
    bindings[name] = bindingOf(tools, exec, name)
  }
  return bindings
}

/** The binding of the tool `name`: one nested `execute` per call. */
function bindingOf(tools: Tools, exec: ToolExecution, name: string): SandboxBinding {
  return async (args, signal) => {
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

/**
 * The tool definition; programs run on `pool`'s workers. A program that returns a value makes a
 * successful result with that value; any failure of the program (a throw, a limit, an abort)
 * throws, code `SANDBOX`. Either way, only after every nested call the program started has ended.
 */
export function runCodeTool(tools: Tools, limits: RunCodeLimits, pool: SandboxPool, locale: Locale = 'en-US'): ToolDefinition {
  return {
    name: TOOL_NAME,
    description: describeRunCode(limits, locale),
    parameters: locale === 'en-US' ? TOOL_PARAMETERS : toolParameters(locale),
    async execute(args: RunCodeArgs, exec: ToolExecution): Promise<JsonValue | undefined> {
      const outcome = await runSandboxed({
        code: args.code,
        bindings: bindingsFor(tools, exec),
        timeoutMs: limits.timeoutMs,
        memoryBytes: limits.memoryBytes,
        maxWaitingArgumentBytes: limits.maxWaitingArgumentBytes,
        signal: exec.signal,
        pool,
      })
      // the host renders a failure as `Error: <message>`: a plain Error's own prefix would double it
      if (!outcome.ok) throw new SubagentError('SANDBOX', outcome.error.replace(/^Error: /, ''))
      return outcome.value
    },
  }
}
