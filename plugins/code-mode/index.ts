/**
 * `CodeMode` (SPEC §1.5): the global tool `run_code`, which runs a model-written JavaScript program
 * in a QuickJS sandbox where every other tool the agent sees is an async binding.
 */
import type { Context } from 'cordis'
import Schema from 'schemastery'
import { updateInPlace } from '../host/index.ts'
import { MAX_TIMER_DELAY_MS } from '../../lib/async/timer-delay.ts'
import { DEFAULT_MEMORY_BYTES, DEFAULT_TIMEOUT_MS, DEFAULT_WAITING_ARGUMENT_BYTES, MAX_MEMORY_BYTES, MIN_MEMORY_BYTES } from './sandbox-contract.ts'
import { locateInterpreterWasm } from './interpreter-code.ts'
import { SandboxPool } from './worker-pool.ts'
import { type Locale, localeOption, localizeConfig } from '../../locales/index.ts'
import { runCodeTool } from './tool.ts'

export {
  DEFAULT_MEMORY_BYTES,
  DEFAULT_TIMEOUT_MS,
  DEFAULT_WAITING_ARGUMENT_BYTES,
  MAX_MEMORY_BYTES,
  MIN_MEMORY_BYTES,
  sandboxMessages,
  waitingArgumentsMessage,
} from './sandbox-contract.ts'
export { runSandboxed, type SandboxBinding, type SandboxOptions, type SandboxOutcome } from './sandbox.ts'
export { liveSandboxWorkers, SandboxPool } from './worker-pool.ts'
export { bindingsFor, describeRunCode, type RunCodeArgs, type RunCodeLimits, TOOL_NAME, TOOL_PARAMETERS, toolParameters } from './tool.ts'

/**
 * Registers the global tool `run_code` for the plugin's lifetime, with its own sandbox workers (one
 * started at once, so the first call does not wait for it). A config update swaps the tool in
 * place for one with the new limits; programs in flight keep theirs and finish.
 * Unloading terminates the idle workers; a worker still running a program goes when it ends.
 * Throws a `PeerDependencyError` at start when the optional QuickJS packages are not installed.
 */
export function CodeMode(ctx: Context, config: CodeMode.Config): void {
  locateInterpreterWasm()
  const pool = new SandboxPool()
  ctx.effect(() => {
    pool.prewarm()
    return () => pool.dispose()
  }, 'code-mode sandbox workers')
  const tools = ctx.tools
  let unregister = tools.register(runCodeTool(tools, config, pool, config.locale ?? 'en-US'))
  // cordis's restart would leave no `run_code` while the old workers end (≈ 50 ms): a model's call
  // then met `unknown tool "run_code"`
  updateInPlace<CodeMode.Config>(ctx, (next) => {
    unregister()
    unregister = tools.register(runCodeTool(tools, next, pool, next.locale ?? 'en-US'))
  })
}

export namespace CodeMode {
  export const inject = ['tools']
  export interface Config {
    timeoutMs: number
    memoryBytes: number
    maxWaitingArgumentBytes?: number
    locale?: Locale
  }
  export const Config: Schema<Config> = localizeConfig(
    Schema.object({
      timeoutMs: Schema.natural().min(1).max(MAX_TIMER_DELAY_MS).default(DEFAULT_TIMEOUT_MS),
      memoryBytes: Schema.natural().min(MIN_MEMORY_BYTES).max(MAX_MEMORY_BYTES).default(DEFAULT_MEMORY_BYTES),
      maxWaitingArgumentBytes: Schema.natural().max(Number.MAX_SAFE_INTEGER).default(DEFAULT_WAITING_ARGUMENT_BYTES),
      locale: localeOption(),
    }),
    'codeMode',
  )
}

export default CodeMode
