/**
 * The host config loader (SPEC §0 "users add plugins to a YAML host config"): not a cordis plugin
 * itself, but what applies plugins to a root context and hot-reloads them. See README.md.
 */
import type {} from './cordis-events.ts'

export { checkPluginConfig, type EntrySource, type EntrySpec, type HostConfig, HostConfigError, parseHostConfig, readHostConfig } from './config-file.ts'
export { Loader, type LoaderEvents, type LoaderOptions, type ReloadReport, type WaitingEntry } from './loader.ts'
export { type PrintLogsOptions, printLogs } from './log-exporter.ts'
export { FileWatcher, type FileWatcherOptions } from './watch.ts'
