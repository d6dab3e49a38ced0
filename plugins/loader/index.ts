/**
 * The host config loader (SPEC §0 "users add plugins to a YAML host config"): not a cordis plugin
 * itself, but what applies plugins to a root context and hot-reloads them. See README.md.
 */
export { checkPluginConfig, type EntrySource, type EntrySpec, type HostConfig, HostConfigError, parseHostConfig, readHostConfig } from './config-file.ts'
export { Loader, type LoaderEvents, type LoaderOptions, type ReloadReport } from './loader.ts'
export { type PrintLogsOptions, printLogs } from './log-exporter.ts'
export { FileWatcher, type FileWatcherOptions } from './watch.ts'

declare module 'cordis' {
  interface Context {
    /**
     * Absolute path of the host config a `Loader` runs on this root (from `start()` until
     * `dispose()`); `undefined` when no loader applied the plugin. Read it with `ctx.get`.
     */
    hostConfigFile?: string
  }
  interface Events {
    /**
     * Asks the process that runs the host to finish with exit `code` (the CLI without `--watch`
     * unloads every plugin, then exits; with `--watch` it keeps running). @mode emit
     */
    'loader/exit'(code: number): void
  }
}
