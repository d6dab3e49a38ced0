/**
 * What the loader tells its caller: the options it takes, the events it emits, and the report of
 * each pass (start, config change, source change).
 */
import type { Locale } from '../../locales/index.ts'

/** An applied entry still waiting for services that no loaded plugin provides. */
export interface WaitingEntry {
  readonly entry: string
  /** The missing services, in the plugin's `inject` order. */
  readonly services: readonly string[]
}

/** What one pass (start, config change, source change) did, by entry name. */
export interface ReloadReport {
  readonly cause: 'start' | 'config' | 'source'
  /** The config file, or the plugin file that changed. */
  readonly file: string
  readonly loaded: string[]
  /** Running entries whose config changed: `fiber.update(config)`. */
  readonly updated: string[]
  /** Running entries disposed and applied again (new code, or a new source in the config). */
  readonly restarted: string[]
  readonly unloaded: string[]
  /** Every problem reported during the pass; `entry` is absent for file-level problems. */
  readonly failed: { entry?: string; message: string }[]
  /**
   * Entries loaded or restarted in this pass that wait for a service nothing provides at its end:
   * they do nothing until a plugin providing it is loaded.
   */
  readonly waiting: WaitingEntry[]
  /**
   * Valid entries a start left unapplied because another entry failed (only without `partial`):
   * a start applies the whole config or nothing.
   */
  readonly held: string[]
}

export interface LoaderEvents {
  /** After each pass started by a file change or by `reload()` / `reloadSource()`. */
  reloaded: [report: ReloadReport]
  /** A plugin emitted `loader/exit`. */
  exit: [code: number]
}

export interface LoaderOptions {
  /** Watch the config file and the loaded plugin files, and reload on change. */
  watch?: boolean
  /**
   * At start, apply the valid entries when others fail (default: `watch`, where the file can be
   * fixed live). Otherwise every entry is imported and its config checked before any is applied,
   * and a start with a failed entry applies none (`held` lists them).
   */
  partial?: boolean
  /** Quiet time after a file event before the file is read (default 40 ms). */
  debounceMs?: number
  /** Language of the loader's warnings (default `en-US`); errors and reports stay English. */
  locale?: Locale
  /**
   * Default `locale` of every plugin whose schemastery `Config` declares one (the CLI's
   * `--locale`); an entry's own `locale` wins. Unset: each plugin's own default.
   */
  pluginLocale?: Locale
}

export function newReport(cause: ReloadReport['cause'], file: string): ReloadReport {
  return { cause, file, loaded: [], updated: [], restarted: [], unloaded: [], failed: [], waiting: [], held: [] }
}
