/**
 * The production host of `--variant=full` (../shared/BENCH.md): the plugins the README's host
 * config loads besides the driver, with a real OpenTelemetry SDK behind `Tracing` and
 * `SessionFiles` writing under a fresh temporary directory. Code Mode is left out: it keeps
 * sandbox workers, which the workload rules out, and adds nothing to a cycle that runs no code.
 */
import { rmSync } from 'node:fs'
import { mkdtemp, readdir } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { trace } from '@opentelemetry/api'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base'
import type { Context } from 'cordis'

export const fullPluginsAll = ['structured-output', 'depth-policy', 'tree-budget', 'session-files', 'subagent-tool', 'tracing'] as const
export type FullPlugin = (typeof fullPluginsAll)[number]

/** TreeBudget limits that are set, so every check runs, and never reached. */
export const unreachable = { maxConcurrent: 1e9, maxChildren: 1e12, maxTokens: 1e12, maxModelRequests: 1e12 }

let exporter: InMemorySpanExporter | undefined

/**
 * The process's span exporter, registered once as the global tracer provider's: every span ended
 * is exported at once (`SimpleSpanProcessor`, as the tests use), none sampled away or dropped by
 * a full batch queue.
 */
function spanExporter(): InMemorySpanExporter {
  if (exporter) return exporter
  exporter = new InMemorySpanExporter()
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  if (!trace.setGlobalTracerProvider(provider)) throw new Error('another global tracer provider is registered')
  return exporter
}

/** A folder under the system's temp dir, removed when the process exits. */
async function temporaryDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-full-'))
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }))
  return dir
}

export interface ProductionPlugins {
  flush(): Promise<void>
  /** Empties the span exporter (it keeps every span it was given). */
  dropSpans(): void
  spansRecorded(): number
  /** Files SessionFiles has written (0 without it). */
  filesWritten(): Promise<number>
}

/** Loads `plugins` on `root`, in the README config's order; an empty list loads nothing. */
export async function loadFullPlugins(root: Context, plugins: readonly FullPlugin[]): Promise<ProductionPlugins> {
  const has = (name: FullPlugin) => plugins.includes(name)
  if (has('structured-output')) await root.plugin((await import('../plugins/structured-output/index.ts')).default)
  if (has('depth-policy')) await root.plugin((await import('../plugins/depth-policy/index.ts')).default, { maxDepth: 2 })
  if (has('tree-budget')) await root.plugin((await import('../plugins/tree-budget/index.ts')).default, unreachable)
  let dir: string | undefined
  let flushFiles = async () => {}
  if (has('session-files')) {
    dir = await temporaryDir()
    await root.plugin((await import('../plugins/session-files/index.ts')).default, { dir })
    const store = root.sessionFiles
    flushFiles = () => store.flush()
  }
  if (has('subagent-tool')) await root.plugin((await import('../plugins/subagent-tool/index.ts')).default, {})
  const spans = has('tracing') ? spanExporter() : undefined
  if (spans) await root.plugin((await import('../plugins/tracing/index.ts')).default, {})
  return {
    flush: flushFiles,
    dropSpans: () => spans?.reset(),
    spansRecorded: () => spans?.getFinishedSpans().length ?? 0,
    filesWritten: async () => (dir ? (await readdir(dir)).length : 0),
  }
}
