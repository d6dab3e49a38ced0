/**
 * `SubagentTool` (SPEC §6): the global tool `subagent`, through which a parent model delegates a
 * task to a spawned or forked child and gets its answer back as the tool result.
 */
import type { Context } from 'cordis'
import Schema from 'schemastery'
import type {} from '../host/index.ts'
import type {} from '../inprocess-run/index.ts'
import { subagentTool, TOOL_DESCRIPTION } from './tool.ts'

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
export { NO_CALLING_AGENT_MESSAGE, type SubagentToolArgs, TOOL_DESCRIPTION, TOOL_NAME, TOOL_PARAMETERS } from './tool.ts'

/**
 * Registers the global tool `subagent` for the plugin's lifetime. A config update restarts the
 * plugin: the tool is registered again with the new settings; calls in flight keep theirs.
 */
export function SubagentTool(ctx: Context, config: SubagentTool.Config): void {
  ctx.tools.register(
    subagentTool({
      description: config.description || TOOL_DESCRIPTION,
      maxDepth: config.maxDepth,
      driver: () => ctx.inprocessRun,
    }),
  )
}

export namespace SubagentTool {
  export const inject = ['inprocessRun', 'tools']
  export interface Config {
    description?: string
    maxDepth?: number
  }
  export const Config: Schema<Config> = Schema.object({
    description: Schema.string().description('Replaces the tool description the model sees.'),
    maxDepth: Schema.natural().description(
      'Depth cap for children started by this tool (inclusive); the smaller of this and DepthPolicy applies.',
    ),
  })
}

export default SubagentTool
