/**
 * Applies a host config to one root context and keeps it in step with the file: entries are
 * loaded in order, a changed config updates only the changed entries, and an edited plugin file is
 * re-imported and its entries restarted. Every problem is logged and the rest keeps running.
 */
import { EventEmitter } from 'node:events'
import { resolve } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import type { Context, Fiber, Logger, Plugin } from 'cordis'
import { DisposedError, thrownMessage } from '../../lib/errors.ts'
import { text } from '../../locales/index.ts'
import type {} from './cordis-events.ts'
import { checkPluginConfig, type EntrySpec, type HostConfig, HostConfigError, isSameSource, readHostConfig, withHostDefaults } from './config-file.ts'
import { describeImportError } from './import-error.ts'
import type { PluginModule } from './plugin-module.ts'
import { describeSource, PluginSources, pickPlugin } from './plugin-source.ts'
import { type LoaderEvents, type LoaderOptions, newReport, type ReloadReport } from './report.ts'
import { missingServices } from './waiting.ts'
import { FileWatcher } from './watch.ts'

export type { LoaderEvents, LoaderOptions, ReloadReport, WaitingEntry } from './report.ts'

interface Entry {
  spec: EntrySpec
  /** Present once applied; a fiber whose apply failed stays, so a config update can revive it. */
  fiber?: Fiber
  /** The plugin the fiber runs. */
  plugin?: Plugin
  /** Valid, but left unapplied by a start whose config had a failed entry: the next pass applies it. */
  held?: boolean
}

function notStarted(method: string): HostConfigError {
  return new HostConfigError(`loader has not started: call start() before ${method}()`)
}

/**
 * The host config loader. `start()` applies the config; with `watch`, file changes then trigger
 * passes, one at a time. `dispose()` stops watching and unloads every entry, last one first.
 */
export class Loader extends EventEmitter<LoaderEvents> {
  readonly file: string
  #entries = new Map<string, Entry>()
  readonly #sources = new PluginSources()
  #queue: Promise<unknown> = Promise.resolve()
  #watcher?: FileWatcher
  #disposal?: Promise<void>
  #started = false
  #offExit?: () => void
  #offFile?: () => void
  readonly #logger: Logger

  constructor(
    readonly root: Context,
    file: string,
    private readonly options: LoaderOptions = {},
  ) {
    super()
    this.file = resolve(file)
    this.#logger = root.logger('loader')
  }

  /** The fiber of a loaded entry. */
  fiber(entry: string): Fiber | undefined {
    return this.#entries.get(entry)?.fiber
  }

  /** Names of the entries that are applied, in load order. */
  loaded(): string[] {
    return [...this.#entries].filter(([, entry]) => entry.fiber).map(([key]) => key)
  }

  /**
   * Reads the config, imports every entry and checks its config, then applies the entries in
   * order, awaiting each. Without `partial` (the default unless `watch`), a config with any failed
   * entry applies none: a host never runs with part of its config (a policy plugin skipped while
   * the plugins after it work). Never rejects for a bad entry (the report lists it); rejects a
   * second call (its entries would be applied twice, the first ones never unloaded).
   */
  start(): Promise<ReloadReport> {
    if (this.#started) return Promise.reject(new HostConfigError('loader has started already: reload() applies the config file again'))
    this.#started = true
    return this.#enqueue(async () => {
      this.#offExit ??= this.root.on('loader/exit', (code) => this.emit('exit', code))
      this.#offFile ??= this.root.provide('hostConfigFile', this.file)
      const report = newReport('start', this.file)
      const read = this.#read(report)
      const prepared: [Entry, Plugin | undefined][] = []
      for (const spec of read?.config.entries ?? []) {
        const entry: Entry = { spec }
        this.#entries.set(spec.key, entry)
        if (!spec.disabled) prepared.push([entry, await this.#prepare(spec, report)])
      }
      const whole = report.failed.length === 0
      for (const [entry, plugin] of prepared) {
        if (!plugin) continue
        if (whole || this.#partial) await this.#plugin(entry, plugin, report, 'loaded')
        else {
          entry.held = true
          report.held.push(entry.spec.key)
        }
      }
      this.#checkWaiting(report, report.loaded)
      // a dispose() called while an entry applied has closed the watcher it found (none): one
      // made now would stay open for good and hold the process
      if (this.options.watch && !this.#disposal) this.#watch(read?.text)
      return report
    })
  }

  get #partial(): boolean {
    return this.options.partial ?? this.options.watch ?? false
  }

  /** Re-reads the config file and applies the difference (what a config file change does). Rejects before `start()`. */
  reload(): Promise<ReloadReport> {
    if (!this.#started) return Promise.reject(notStarted('reload'))
    return this.#enqueue(async () => this.#announce(await this.#reloadConfig()))
  }

  /** Re-imports a plugin file and restarts its entries (what a plugin file change does). Rejects before `start()`. */
  reloadSource(file: string): Promise<ReloadReport> {
    if (!this.#started) return Promise.reject(notStarted('reloadSource'))
    return this.#enqueue(async () => this.#announce(await this.#reloadSource(resolve(file))))
  }

  /** Stops watching, waits for a pass in progress, then unloads every entry, last first. Idempotent. */
  dispose(): Promise<void> {
    return (this.#disposal ??= (async () => {
      this.#watcher?.close()
      await this.#queue
      for (const entry of [...this.#entries.values()].reverse()) await this.#unload(entry)
      this.#entries.clear()
      this.#offExit?.()
      this.#offFile?.()
    })())
  }

  #enqueue<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(() => {
      if (this.#disposal) throw new DisposedError('the loader')
      return task()
    })
    this.#queue = run.catch(() => {})
    return run
  }

  #announce(report: ReloadReport): ReloadReport {
    this.emit('reloaded', report)
    return report
  }

  #fail(report: ReloadReport, error: unknown, entry?: string): void {
    const message = error instanceof HostConfigError || entry === undefined ? thrownMessage(error) : `plugin "${entry}": ${thrownMessage(error)}`
    this.#logger.error(message)
    report.failed.push(entry === undefined ? { message } : { entry, message })
  }

  /** The config file's entries, or `undefined` (reported) when the file is unusable. */
  #read(report: ReloadReport): { config: HostConfig; text: string } | undefined {
    let read: { config: HostConfig; text: string }
    try {
      read = readHostConfig(this.file)
    } catch (error) {
      this.#fail(report, error)
      return undefined
    }
    for (const problem of read.config.problems) this.#fail(report, problem, problem.entry)
    return read
  }

  async #reloadConfig(): Promise<ReloadReport> {
    const report = newReport('config', this.file)
    // an unreadable or malformed file changes nothing: everything keeps running
    const read = this.#read(report)
    if (!read) return report
    if (!read.text.trim()) {
      // most likely caught between an editor's truncate and write
      this.#fail(report, `host config "${this.file}" is empty; ignored (write "plugins: {}" to unload every plugin)`)
      return report
    }
    const { config } = read
    const next = new Map(config.entries.map((spec) => [spec.key, spec]))
    // a malformed entry is reported and left as it was
    const kept = new Set(config.problems.map((problem) => problem.entry))
    for (const [key, entry] of this.#entries) {
      if (entry.fiber && !kept.has(key) && (next.get(key)?.disabled ?? true)) {
        await this.#unload(entry)
        report.unloaded.push(key)
      }
    }
    const entries = new Map<string, Entry>()
    for (const spec of config.entries) {
      const entry = this.#entries.get(spec.key) ?? { spec }
      entries.set(spec.key, entry)
      await this.#apply(entry, spec, report)
    }
    for (const [key, entry] of this.#entries) if (kept.has(key)) entries.set(key, entry)
    this.#entries = entries
    this.#checkWaiting(report, [...report.loaded, ...report.restarted])
    this.#watchFiles()
    return report
  }

  /** Brings one entry from its current state to `spec`. */
  async #apply(entry: Entry, spec: EntrySpec, report: ReloadReport): Promise<void> {
    const previous = entry.spec
    if (spec.disabled) {
      entry.spec = spec
    } else if (!entry.fiber) {
      // a failed entry is retried only when its spec changed (or its file did, see #reloadSource);
      // one a start held back because another failed is applied now
      if (!entry.held && previous !== spec && isDeepStrictEqual(previous, spec)) return
      entry.held = false
      entry.spec = spec
      await this.#load(entry, report)
    } else if (!isSameSource(previous, spec)) {
      // the old plugin keeps running unless the new source imports and accepts the config
      const plugin = await this.#prepare(spec, report)
      if (!plugin) return
      await this.#unload(entry)
      entry.spec = spec
      await this.#plugin(entry, plugin, report, 'restarted')
    } else if (!isDeepStrictEqual(previous.config, spec.config)) {
      await this.#update(entry, spec, report)
    }
  }

  async #update(entry: Entry, spec: EntrySpec, report: ReloadReport): Promise<void> {
    const fiber = entry.fiber!
    try {
      checkPluginConfig(spec.key, entry.plugin, this.#configOf(entry.plugin, spec))
    } catch (error) {
      // the old config keeps running
      this.#fail(report, error, spec.key)
      return
    }
    entry.spec = spec
    report.updated.push(spec.key)
    try {
      await fiber.update(this.#configOf(entry.plugin, spec))
    } catch (error) {
      this.#fail(report, `failed to apply: ${thrownMessage(error)}`, spec.key)
    }
  }

  async #reloadSource(file: string): Promise<ReloadReport> {
    const report = newReport('source', file)
    const entries = [...this.#entries.values()].filter(
      (entry) => !entry.spec.disabled && entry.spec.source.kind === 'file' && entry.spec.source.file === file,
    )
    if (!entries.length) return report
    this.#sources.bump(file)
    let module: PluginModule
    try {
      module = await this.#sources.import(entries[0].spec.source)
    } catch (error) {
      for (const entry of entries) this.#fail(report, `cannot load "${file}": ${describeImportError(error, file)}`, entry.spec.key)
      return report
    }
    for (const entry of entries) {
      const { spec } = entry
      let plugin: Plugin
      try {
        plugin = pickPlugin(spec, module)
        if (plugin === entry.plugin) {
          throw new HostConfigError(`"${file}" was not evaluated again: it loads as CommonJS, which is cached by path (use "type": "module" or .mts)`, spec.key)
        }
        checkPluginConfig(spec.key, plugin, this.#configOf(plugin, spec))
      } catch (error) {
        // the running code keeps running
        this.#fail(report, error, spec.key)
        continue
      }
      const wasRunning = !!entry.fiber
      await this.#unload(entry)
      await this.#plugin(entry, plugin, report, wasRunning ? 'restarted' : 'loaded')
    }
    this.#checkWaiting(report, [...report.loaded, ...report.restarted])
    return report
  }

  /** Imports, checks and applies an entry that has no fiber. */
  async #load(entry: Entry, report: ReloadReport): Promise<void> {
    const plugin = await this.#prepare(entry.spec, report)
    if (plugin) await this.#plugin(entry, plugin, report, 'loaded')
  }

  /** The entry's plugin, imported and with its config checked; `undefined` (reported) on failure. */
  async #prepare(spec: EntrySpec, report: ReloadReport): Promise<Plugin | undefined> {
    let module: PluginModule
    try {
      module = await this.#sources.import(spec.source)
    } catch (error) {
      const file = spec.source.kind === 'file' ? spec.source.file : undefined
      this.#fail(report, `cannot load ${describeSource(spec.source)}: ${describeImportError(error, file)}`, spec.key)
      return undefined
    }
    try {
      const plugin = pickPlugin(spec, module)
      checkPluginConfig(spec.key, plugin, this.#configOf(plugin, spec))
      return plugin
    } catch (error) {
      this.#fail(report, error, spec.key)
      return undefined
    }
  }

  async #plugin(entry: Entry, plugin: Plugin, report: ReloadReport, outcome: 'loaded' | 'restarted'): Promise<void> {
    const { spec } = entry
    let fiber: Fiber
    try {
      fiber = this.root.plugin(plugin, this.#configOf(plugin, spec) as never)
    } catch (error) {
      this.#fail(report, `failed to apply: ${thrownMessage(error)}`, spec.key)
      return
    }
    entry.fiber = fiber
    entry.plugin = plugin
    report[outcome].push(spec.key)
    try {
      await fiber
    } catch (error) {
      this.#fail(report, `failed to apply: ${thrownMessage(error)}`, spec.key)
    }
  }

  async #unload(entry: Entry): Promise<void> {
    const fiber = entry.fiber
    entry.fiber = entry.plugin = undefined
    if (!fiber) return
    try {
      await fiber.dispose()
    } catch (error) {
      this.#logger.error(`plugin "${entry.spec.key}": failed to unload: ${thrownMessage(error)}`)
    }
  }

  /** What an entry applies: its config plus the host-wide defaults its plugin declares. */
  #configOf(plugin: unknown, spec: EntrySpec): unknown {
    return withHostDefaults(plugin, spec.config, { locale: this.options.pluginLocale })
  }

  /** Lists (and warns about) the entries of `keys` that wait for a service nothing provides. */
  #checkWaiting(report: ReloadReport, keys: readonly string[]): void {
    for (const key of keys) {
      const services = missingServices(this.root, this.#entries.get(key)?.fiber)
      if (!services.length) continue
      report.waiting.push({ entry: key, services })
      const names = services.map((name) => `"${name}"`).join(', ')
      this.#logger.warn(text(this.options.locale ?? 'en-US', 'loader.waiting', { entry: key, services: names }))
    }
  }

  #watch(configText: string | undefined): void {
    this.#watcher = new FileWatcher(
      (file) => {
        const pass = file === this.file ? this.reload() : this.reloadSource(file)
        pass.catch(() => {})
      },
      {
        debounceMs: this.options.debounceMs,
        onError: (error, folder) => this.#logger.warn(`cannot watch "${folder}": ${error.message}`),
      },
    )
    this.#watcher.add(this.file, configText)
    this.#watchFiles()
  }

  /** Watches exactly the files that entries load from (plus the config file). */
  #watchFiles(): void {
    const watcher = this.#watcher
    if (!watcher) return
    const wanted = new Set([this.file])
    for (const { spec } of this.#entries.values()) if (spec.source.kind === 'file') wanted.add(spec.source.file)
    for (const file of watcher.files()) if (!wanted.has(file)) watcher.delete(file)
    for (const file of wanted) watcher.add(file)
  }
}
