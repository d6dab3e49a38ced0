/**
 * `AgentDefinitions` (SPEC §12): subagents defined as Markdown files with YAML front matter (and
 * inline in the config), watched, and applied to a start that names one (`request.agent`) through
 * the driver's `subagent/define` hook.
 */
import { resolve } from 'node:path'
import type { Context } from 'cordis'
import Schema from 'schemastery'
import { formatProblem, type SourceProblem } from '../../lib/agent-definition/catalog.ts'
import type { AgentDefinition } from '../../lib/agent-definition/definition.ts'
import { thrownMessage } from '../../lib/errors.ts'
import type { SubagentCatalogEntry } from '../../lib/types.ts'
import { localizeConfig } from '../../locales/index.ts'
import { rawService, updateInPlace } from '../../cordis-glue/bridge.ts'
import type {} from '../host/index.ts'
import type {} from '../inprocess-run/index.ts'
import type {} from '../loader/index.ts'
import { applyDefinition, toolProblems } from './apply.ts'
import { DefinitionSet } from './definition-set.ts'

export type { AgentDefinition } from '../../lib/agent-definition/definition.ts'
export { type SourceProblem as AgentDefinitionProblem, formatProblem } from '../../lib/agent-definition/catalog.ts'
export { unknownDefinitionMessage } from './apply.ts'
export { AgentDefinitionError } from './errors.ts'

declare module 'cordis' {
  interface Context {
    agentDefinitions: AgentDefinitionsService
  }
}

/** `ctx.agentDefinitions`: the loaded agent definitions and the problems of the broken ones. */
export interface AgentDefinitionsService {
  /** The valid definitions, sorted by name (frozen objects). */
  list(): readonly AgentDefinition[]
  /** The valid definition called `name`, or `undefined`. */
  get(name: string): AgentDefinition | undefined
  /**
   * Every problem: of the files and inline entries (bad YAML, missing, invalid or unknown fields,
   * unsupported schema, duplicate names), and of valid definitions whose `tools` or
   * `disallowedTools` name no tool that exists now. Format one with `formatProblem`.
   */
  errors(): readonly SourceProblem[]
  /** Reads the folders again now (what the watcher does after a change). */
  reload(): void
}

/**
 * Reads the definitions at apply, and again whenever a watched folder changes (debounced) or the
 * config is updated (in place). A start already running keeps the definition it started with.
 */
export function AgentDefinitions(ctx: Context, config: AgentDefinitions.Config): void {
  const logger = ctx.logger('agent-definitions')
  const tools = rawService(ctx.tools)
  const base = () => {
    const hostConfig: string | undefined = ctx.get('hostConfigFile')
    return hostConfig ? resolve(hostConfig, '..') : process.cwd()
  }
  // what the `subagent` tool offers the model follows the definitions (SPEC §12)
  const announce = () => {
    try {
      ctx.root.emit('subagent/catalog-changed')
    } catch (error) {
      logger.warn(`a "subagent/catalog-changed" listener failed: ${thrownMessage(error)}`)
    }
  }
  const set = new DefinitionSet({
    debounceMs: config.debounceMs,
    onChange: () => announce(),
    onWatchError: (error, folder) => logger.debug(`watching ${folder}: ${error.message}`),
  })
  const load = (next: AgentDefinitions.Config) => {
    const folders = (next.dirs ?? []).map((dir) => resolve(base(), dir))
    const catalog = set.load(folders, next.definitions ?? [], next.watch !== false, next.debounceMs)
    for (const problem of catalog.problems) logger.warn(formatProblem(problem))
  }
  updateInPlace<AgentDefinitions.Config>(ctx, load)
  ctx.effect(() => () => {
    set.close()
    // after this plugin's listeners are gone: the catalog is empty again
    queueMicrotask(announce)
  }, 'agent definition watch')

  ctx.on('subagent/catalog', (entries) => {
    for (const definition of set.catalog().definitions) {
      const entry: SubagentCatalogEntry = { name: definition.name, description: definition.description }
      if (definition.background !== undefined) entry.background = definition.background
      entries.push(entry)
    }
  })

  ctx.on('subagent/define', (plan) => {
    const name = plan.request.agent
    if (name === undefined) return
    applyDefinition(plan, name, set.catalog(), tools.visibleGlobals())
    // the child's header says which definition it was started from (SPEC §12)
    plan.recordHeader('agent', name)
  })

  // last: the first read announces the catalog, and what hears it asks these listeners
  load(config)

  const service: AgentDefinitionsService = {
    list: () => set.catalog().definitions,
    get: (name) => set.catalog().definitions.find((definition) => definition.name === name),
    errors: () => [...set.catalog().problems, ...toolProblems(set.catalog().definitions, tools.visibleGlobals())],
    reload: () => set.reload(),
  }
  ctx.provide('agentDefinitions', service)
}

export namespace AgentDefinitions {
  export const inject = ['inprocessRun', 'tools']
  export interface Config {
    /** Folders of `*.md` definition files, relative to the host config file's folder. */
    dirs: string[]
    /** Definitions written in the config, with the fields of a file (`persona` for its body). */
    definitions: Record<string, unknown>[]
    /** Watch the folders and reload on change (default true). */
    watch?: boolean
    /** Quiet time after a change before the folders are read again, in ms (default 100). */
    debounceMs: number
  }
  export const Config: Schema<Config> = localizeConfig(
    Schema.object({
      dirs: Schema.array(Schema.string()).default(['agents']),
      definitions: Schema.array(Schema.dict(Schema.any())).default([]),
      watch: Schema.boolean().default(true),
      debounceMs: Schema.natural().default(100),
    }),
    'agentDefinitions',
  )
}

export default AgentDefinitions
