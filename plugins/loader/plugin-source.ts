/**
 * Where an entry's plugin comes from: importing its module (a fresh copy of a file after an edit)
 * and picking the plugin out of it.
 */
import { pathToFileURL } from 'node:url'
import type { Plugin } from 'cordis'
import { type EntrySource, type EntrySpec, HostConfigError } from './config-file.ts'
import { type PluginModule, pluginOf } from './plugin-module.ts'

/** A source as messages name it: `"<file>"` or `package "<name>"`. */
export function describeSource(source: EntrySource): string {
  return source.kind === 'file' ? `"${source.file}"` : `package "${source.name}"`
}

/** Imports plugin modules; a file re-imported after `bump(file)` is evaluated again. */
export class PluginSources {
  /** Import version of each plugin file: `?v=<n>` on its URL once it has been re-imported. */
  readonly #versions = new Map<string, number>()

  /** The next import of `file` evaluates it again. */
  bump(file: string): void {
    this.#versions.set(file, (this.#versions.get(file) ?? 0) + 1)
  }

  /** The module of `source`; rejects with the import's own error. */
  import(source: EntrySource): Promise<PluginModule> {
    if (source.kind === 'package') return import(source.name)
    const url = pathToFileURL(source.file)
    const version = this.#versions.get(source.file)
    // the first import shares the module with static imports of the same file; later ones are fresh copies
    if (version) url.search = `?v=${version}`
    return import(url.href)
  }
}

/** The plugin `spec` names in `module`. Throws `HostConfigError` `… has no default export that is a cordis plugin`. */
export function pickPlugin(spec: EntrySpec, module: PluginModule): Plugin {
  const plugin = pluginOf(module, spec.export)
  if (plugin) return plugin
  const what = spec.export === 'default' ? 'no default export' : `no export "${spec.export}"`
  throw new HostConfigError(`${describeSource(spec.source)} has ${what} that is a cordis plugin`, spec.key)
}
