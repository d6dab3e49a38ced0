/**
 * `subagent-inprocess check <config>`: reads a host config and every agent definition it points
 * to without starting any plugin, and prints every problem found — malformed entries, modules
 * that do not import, configs their plugin's schema rejects (unknown keys included), and broken
 * definition files. Returns the exit code: 1 on any problem, 0 (with a one-line summary) otherwise.
 */
import { dirname, isAbsolute, relative, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { buildCatalog, formatProblem } from '../lib/agent-definition/catalog.ts'
import { thrownMessage } from '../lib/errors.ts'
import type { Locale } from '../lib/text/i18n.ts'
import { text } from '../locales/index.ts'
import AgentDefinitions from '../plugins/agent-definitions/index.ts'
import { readDefinitionFiles } from '../plugins/agent-definitions/definition-files.ts'
import { checkPluginConfig, type EntrySpec, readHostConfig } from '../plugins/loader/index.ts'
import { type PluginModule, pluginOf } from '../plugins/loader/plugin-module.ts'

export interface CheckOutput {
  out(line: string): void
  err(line: string): void
}

/** A path as the user would type it from here: relative when it is under the working folder. */
function shown(path: string): string {
  if (!isAbsolute(path)) return path
  const from = relative(process.cwd(), path)
  return from && !from.startsWith('..') && !isAbsolute(from) ? from : path
}

function isAgentDefinitions(plugin: unknown): boolean {
  // the same module from source and from `dist/` are two objects with one name
  return plugin === AgentDefinitions || (typeof plugin === 'function' && plugin.name === 'AgentDefinitions')
}

async function importEntry(spec: EntrySpec): Promise<PluginModule> {
  return spec.source.kind === 'package' ? import(spec.source.name) : import(pathToFileURL(spec.source.file).href)
}

/** The problems of one `AgentDefinitions` entry's definitions, and how many are valid. */
function checkDefinitions(config: unknown, base: string): { problems: string[]; count: number } {
  const { dirs, definitions } = AgentDefinitions.Config(config as AgentDefinitions.Config)
  const files = readDefinitionFiles(dirs.map((dir) => resolve(base, dir)))
  const catalog = buildCatalog(definitions, files)
  return { problems: catalog.problems.map((problem) => formatProblem({ ...problem, source: shown(problem.source) })), count: catalog.definitions.length }
}

/** Checks `file`; writes each problem to `err` and the summary to `out`. Resolves with the exit code. */
export async function check(file: string, locale: Locale, output: CheckOutput): Promise<number> {
  const problems: string[] = []
  let plugins = 0
  let definitions = 0
  let config: ReturnType<typeof readHostConfig>['config']
  try {
    config = readHostConfig(resolve(file)).config
  } catch (error) {
    output.err(thrownMessage(error))
    return 1
  }
  for (const problem of config.problems) problems.push(problem.message)
  for (const spec of config.entries) {
    if (spec.disabled) continue
    let module: PluginModule
    try {
      module = await importEntry(spec)
    } catch (error) {
      problems.push(`plugin "${spec.key}": cannot import it: ${thrownMessage(error).split('\n', 1)[0]}`)
      continue
    }
    const plugin = pluginOf(module, spec.export)
    if (!plugin) {
      problems.push(`plugin "${spec.key}": ${spec.export === 'default' ? 'no default export' : `no export "${spec.export}"`} that is a cordis plugin`)
      continue
    }
    plugins++
    try {
      checkPluginConfig(spec.key, plugin, spec.config)
    } catch (error) {
      problems.push(thrownMessage(error))
      continue
    }
    if (isAgentDefinitions(plugin)) {
      const found = checkDefinitions(spec.config, dirname(config.file))
      problems.push(...found.problems)
      definitions += found.count
    }
  }
  for (const problem of problems) output.err(problem)
  if (problems.length > 0) {
    output.err(text(locale, 'cli.checkFailed', { file: shown(config.file), count: problems.length }))
    return 1
  }
  output.out(text(locale, 'cli.checkPassed', { file: shown(config.file), plugins, definitions }))
  return 0
}
