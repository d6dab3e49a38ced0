/**
 * `SubagentTool` (SPEC §6): the global tool `subagent`, through which a parent model delegates a
 * task to a spawned or forked child and gets its answer back as the tool result.
 */
import type { Context } from 'cordis'
import Schema from 'schemastery'
import { listenDirect, rawService, updateInPlace } from '../../cordis-glue/bridge.ts'
import { thrownMessage } from '../../lib/errors.ts'
import type { Agent, DelegationOutlook } from '../../lib/types.ts'
import { type Locale, localeOption, localizeConfig, text } from '../../locales/index.ts'
import type {} from '../host/index.ts'
import type {} from '../inprocess-run/index.ts'
import { type BackgroundRunInfo, backgroundSettled, deliverAfterResume, pendingRuns } from './background.ts'
import { canDelegate, DELEGATION_ORDER, DELEGATION_SECTION, delegationText } from './delegation-section.ts'
import { describeWithAgents, subagentTool, TOOL_NAME } from './tool.ts'

declare module 'cordis' {
  interface Context {
    subagentTool: SubagentToolService
  }
}

/** `ctx.subagentTool`: the background runs of a parent (SPEC §8.2). */
export interface SubagentToolService {
  /**
   * `{runId, label}` of the parent's live background runs, in start order; `[]` once it is
   * disposed. Throws `TypeError` `subagentTool.pending parent must be an agent` for anything else.
   */
  pending(parent: Agent): BackgroundRunInfo[]
  /**
   * Resolves once the parent (without one: every parent in the process) has no pending background
   * run left: each result was delivered or dropped with its parent. Never rejects.
   */
  settled(parent?: Agent): Promise<void>
}

export {
  BACKGROUND_DELIVERED_EVENT,
  BACKGROUND_START_EVENT,
  interruptedBackgroundRuns,
} from '../../lib/delegation/background-record.ts'
export { type BackgroundRunInfo, backgroundSettled } from './background.ts'

export {
  BUDGET_HEADING,
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
export { DELEGATION_ORDER, DELEGATION_SECTION, delegationText } from './delegation-section.ts'
export {
  describeWithAgents,
  NO_CALLING_AGENT_MESSAGE,
  type SubagentToolArgs,
  TOOL_DESCRIPTION,
  TOOL_NAME,
  TOOL_PARAMETERS,
  toolParameters,
} from './tool.ts'

/**
 * Registers the global tool `subagent` for the plugin's lifetime. A config update applies in
 * place: the tool is registered again with the new settings in one synchronous step and the
 * `subagentTool` service stays (a restart left no tool for a few microtasks and restarted every
 * plugin injecting the service); calls in flight keep their settings.
 */
export function SubagentTool(ctx: Context, config: SubagentTool.Config): void {
  const logger = ctx.logger('subagent-tool')
  // held directly: a background run may report after this plugin was unloaded
  const agents = rawService(ctx.agents)
  // held once: each read of a service through the context builds a stack-capturing Error (about
  // 10 µs), and the driver is asked on every model request of every agent. The plugin restarts
  // with the driver, so the held one is always the live one
  const driver = rawService(ctx.inprocessRun)
  const tools = ctx.tools
  const visibleTools = rawService(tools)
  const report = (error: unknown) => logger.warn(`a background subagent could not be delivered: ${thrownMessage(error)}`)
  // the latest config: the registered tool and the delegation section follow it
  let current = config
  // the outlook the tool's `available` read last, for the section listener that asked through
  // `tools.get` a moment before: one policy dispatch where there were two
  let isAsking = false
  let askedAgent: Agent | undefined
  let askedOutlook: DelegationOutlook | undefined
  const register = () => {
    const cap = current?.maxDepth
    const locale = current?.locale ?? 'en-US'
    const agents = driver.catalog()
    const description = describeWithAgents(current?.description || text(locale, 'subagentTool.description'), locale, agents)
    return tools.register({
      ...subagentTool({ description, locale, maxDepth: cap, agents, driver, report }),
      // hidden from an agent that could not start a child now (SPEC §9); asked on every listing
      available: (agent) => {
        const outlook = driver.outlook(agent)
        if (isAsking) {
          askedAgent = agent
          askedOutlook = outlook
        }
        return canDelegate(outlook, cap)
      },
    })
  }
  let unregister = register()
  updateInPlace<SubagentTool.Config>(ctx, (next) => {
    current = next
    unregister()
    unregister = register()
  })
  // the definitions offered as `agent` changed: the next model request sees the new list
  ctx.on('subagent/catalog-changed', () => {
    unregister()
    unregister = register()
  })
  // a resumed tree's background runs that never reached their parents (SPEC §14)
  ctx.on('subagent/resumed', (tree) => deliverAfterResume(tree, { locale: current?.locale ?? 'en-US', report }))
  listenDirect(ctx, 'system-prompt/assemble', (assembly, { agent }, next) => {
    // `get` asks the tool's `available` (unless another tool shadows it): its outlook is the one
    // the section tells, read in the same synchronous call
    isAsking = true
    let visible: boolean
    try {
      visible = visibleTools.get(TOOL_NAME, agent) !== undefined
    } finally {
      isAsking = false
    }
    const outlook = askedAgent === agent && askedOutlook ? askedOutlook : driver.outlook(agent)
    askedAgent = undefined
    askedOutlook = undefined
    if (outlook && visible) {
      assembly.sections.push({ name: DELEGATION_SECTION, order: DELEGATION_ORDER, text: delegationText(outlook, current?.locale ?? 'en-US', current?.maxDepth) })
    }
    return next()
  })
  const service: SubagentToolService = {
    pending: (parent) => {
      if (typeof parent !== 'object' || parent === null || typeof parent.id !== 'string') {
        throw new TypeError('subagentTool.pending parent must be an agent')
      }
      return agents.get(parent.id) === parent ? pendingRuns(parent) : []
    },
    settled: (parent) => backgroundSettled(parent),
  }
  ctx.provide('subagentTool', service)
}

export namespace SubagentTool {
  export const inject = ['agents', 'inprocessRun', 'tools']
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
