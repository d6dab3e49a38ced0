/**
 * A temporary folder with a host config and probe plugins written as `.ts` files, a loader on a
 * fresh root context, and the probes' shared log (what each probe applied and disposed).
 */
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from 'cordis'
import { Loader, type LoaderOptions } from '../../plugins/loader/index.ts'

export interface ProbeRecord {
  event: 'apply' | 'dispose'
  version: string
  config: { name: string; greeting: string; count: number }
}

const logKey = Symbol.for('subagent-inprocess.loader-test.probes')

/** The log every probe plugin appends to (shared through `globalThis`, as probes are separate modules). */
export function probeLog(): ProbeRecord[] {
  const global = globalThis as { [logKey]?: ProbeRecord[] }
  return (global[logKey] ??= [])
}

/** The config each probe `name` currently runs with, for the probes that are applied. */
export function activeProbes(): Map<string, ProbeRecord> {
  const active = new Map<string, ProbeRecord>()
  for (const record of probeLog()) {
    if (record.event === 'apply') active.set(record.config.name, record)
    else active.delete(record.config.name)
  }
  return active
}

const schemastery = import.meta.resolve('schemastery')

/**
 * Source of a probe plugin: it logs `apply` and, on dispose, `dispose`, tagged with `version`.
 * Config: `{name (default "probe"), greeting (default "hello"), count: natural (default 1)}`.
 * `throws` makes the apply throw `boom`; `emitExit` makes it emit `loader/exit` with that code.
 */
export function probeSource(version: string, options: { throws?: boolean; emitExit?: number } = {}): string {
  return `import Schema from ${JSON.stringify(schemastery)}
const log = (globalThis as any)[Symbol.for('subagent-inprocess.loader-test.probes')] ??= []
export default function Probe(ctx: any, config: any) {
  ${options.throws ? "throw new Error('boom')" : ''}
  log.push({ event: 'apply', version: ${JSON.stringify(version)}, config })
  ctx.effect(() => () => { log.push({ event: 'dispose', version: ${JSON.stringify(version)}, config }) }, 'probe')
  ${options.emitExit !== undefined ? `ctx.emit('loader/exit', ${options.emitExit})` : ''}
}
Probe.Config = Schema.object({
  name: Schema.string().default('probe'),
  greeting: Schema.string().default('hello'),
  count: Schema.natural().default(1),
})
`
}

export interface Workspace {
  readonly dir: string
  readonly configFile: string
  /** Writes `text` to `name` (relative to the folder) in place. */
  write(name: string, text: string): void
  /** Writes `text` to a temporary file and renames it over `name`, as editors' atomic saves do. */
  writeAtomically(name: string, text: string): void
  /** A loader on a fresh root context for the folder's `cordis.yml`. */
  loader(options?: LoaderOptions): { root: Context; loader: Loader }
  /** Disposes the loaders it made and removes the folder. */
  cleanup(): Promise<void>
}

export function workspace(): Workspace {
  const dir = mkdtempSync(join(tmpdir(), 'loader-test-'))
  const loaders: Loader[] = []
  probeLog().length = 0
  // plugin files are ES modules (a CommonJS file is cached by path and cannot be re-imported fresh)
  writeFileSync(join(dir, 'package.json'), '{"type": "module"}\n')
  return {
    dir,
    configFile: join(dir, 'cordis.yml'),
    write(name, text) {
      writeFileSync(join(dir, name), text)
    },
    writeAtomically(name, text) {
      const temporary = join(dir, `.${name}.swp`)
      writeFileSync(temporary, text)
      renameSync(temporary, join(dir, name))
    },
    loader(options) {
      const root = new Context()
      const loader = new Loader(root, join(dir, 'cordis.yml'), options)
      loaders.push(loader)
      return { root, loader }
    },
    async cleanup() {
      await Promise.all(loaders.map((loader) => loader.dispose()))
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** Errors and warnings logged on `root`, one string each. */
export function logged(root: Context): string[] {
  return root.logger.buffer.filter((m) => m.type === 'warn' || m.type === 'error').map((m) => m.args.map(String).join(' '))
}

/** Live fibers of every plugin on `root` (the leak check after `dispose`). */
export function fiberCount(root: Context): number {
  let total = 0
  for (const runtime of root.registry.values()) total += runtime.fibers.length
  return total
}
