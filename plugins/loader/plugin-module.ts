/**
 * Finds the cordis plugin in an imported module: the named export (`default` unless the entry
 * says otherwise), or — for the koishi/cordis module shape (`export const name`, `inject`,
 * `Config`, `apply`) — the module itself.
 */
import type { Plugin } from 'cordis'

/** An imported module's namespace. */
export type PluginModule = Readonly<Record<string, unknown>>

/** The plugins made from module-shaped modules, so one module always yields the same plugin. */
const shaped = new WeakMap<PluginModule, Plugin>()

/** True for a plugin function or class, or an object with an `apply` function. */
export function isPlugin(value: unknown): value is Plugin {
  return typeof value === 'function' || typeof (value as { apply?: unknown } | null)?.apply === 'function'
}

/**
 * The plugin `module` provides under `exported`, or `undefined`. When `exported` is `default` and
 * the default export is not a plugin but the module exports an `apply` function, the module's
 * exports form the plugin (a plain copy, since cordis may tag the object and a namespace is sealed).
 * The same module always yields the same plugin object.
 */
export function pluginOf(module: PluginModule, exported: string): Plugin | undefined {
  const value = module[exported]
  if (isPlugin(value)) return value
  if (exported !== 'default' || typeof module.apply !== 'function') return undefined
  let plugin = shaped.get(module)
  if (!plugin) {
    const { default: _default, ...exports } = module
    plugin = exports as unknown as Plugin
    shaped.set(module, plugin)
  }
  return plugin
}
