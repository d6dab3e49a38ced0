/**
 * `CodeMode` (SPEC §1.5): the global tool `run_code`, which runs a model-written JavaScript program
 * in a QuickJS sandbox where every other tool the agent sees is an async binding.
 */
import type { Context } from 'cordis'
import Schema from 'schemastery'
import type {} from '../host/index.ts'
import { DEFAULT_MEMORY_BYTES, DEFAULT_TIMEOUT_MS, MIN_MEMORY_BYTES } from './sandbox.ts'
import { type Locale, localeOption, localizeConfig } from '../../locales/index.ts'
import { runCodeTool } from './tool.ts'

export {
  DEFAULT_MEMORY_BYTES,
  DEFAULT_TIMEOUT_MS,
  MIN_MEMORY_BYTES,
  runSandboxed,
  type SandboxBinding,
  type SandboxOptions,
  type SandboxOutcome,
  sandboxMessages,
} from './sandbox.ts'
export { bindingsFor, describeRunCode, type RunCodeArgs, type RunCodeLimits, TOOL_NAME, TOOL_PARAMETERS, toolParameters } from './tool.ts'

/**
 * Registers the global tool `run_code` for the plugin's lifetime. A config update restarts the
 * plugin: the tool is registered again with the new limits; programs in flight keep theirs.
 */
export function CodeMode(ctx: Context, config: CodeMode.Config): void {
  ctx.tools.register(runCodeTool(ctx.tools, config, config.locale ?? 'en-US'))
}

export namespace CodeMode {
  export const inject = ['tools']
  export interface Config {
    timeoutMs: number
    memoryBytes: number
    locale?: Locale
  }
  export const Config: Schema<Config> = localizeConfig(
    Schema.object({
      timeoutMs: Schema.natural().min(1).default(DEFAULT_TIMEOUT_MS),
      memoryBytes: Schema.natural().min(MIN_MEMORY_BYTES).default(DEFAULT_MEMORY_BYTES),
      locale: localeOption(),
    }),
    'codeMode',
  )
}

export default CodeMode
