/**
 * `SubagentTool` (SPEC §6): the global tool `subagent`, through which a parent model delegates a
 * task to a spawned or forked child and gets its answer back as the tool result.
 */
import type { Context } from 'cordis'
import Schema from 'schemastery'
import { type Locale, localeOption, localizeConfig, text } from '../../locales/index.ts'
import type {} from '../host/index.ts'
import type {} from '../inprocess-run/index.ts'
import { subagentTool } from './tool.ts'

export {
  CANCELLED_HEADING,
  DECLINED_HEADING,
  FAILED_HEADING,
  type IncompleteReason,
  incompleteCodes,
  incompleteHeadings,
  outputText,
  TOKEN_LIMIT_HEADING,
  toToolResult,
} from './outcome.ts'
export {
  NO_CALLING_AGENT_MESSAGE,
  type SubagentToolArgs,
  TOOL_DESCRIPTION,
  TOOL_NAME,
  TOOL_PARAMETERS,
  toolParameters,
} from './tool.ts'

/**
 * Registers the global tool `subagent` for the plugin's lifetime. A config update restarts the
 * plugin: the tool is registered again with the new settings; calls in flight keep theirs.
 */
export function SubagentTool(ctx: Context, config: SubagentTool.Config): void {
  const locale = config?.locale ?? 'en-US'
  ctx.tools.register(
    subagentTool({
      description: config?.description || text(locale, 'subagentTool.description'),
      locale,
      maxDepth: config?.maxDepth,
      driver: () => ctx.inprocessRun,
    }),
  )
}

export namespace SubagentTool {
  export const inject = ['inprocessRun', 'tools']
  export interface Config {
    description?: string
    maxDepth?: number
    /** Language of what the parent model sees: description, parameters, result headings, diagnostics. */
    locale?: Locale
  }
  export const Config: Schema<Config> = localizeConfig(
    Schema.object({ description: Schema.string(), maxDepth: Schema.natural(), locale: localeOption() }),
    'subagentTool',
  )
}

export default SubagentTool
