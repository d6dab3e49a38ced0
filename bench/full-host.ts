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
import { BasicTracerProvider, BatchSpanProcessor, InMemorySpanExporter } from '@opentelemetry/sdk-trace-base'
import type { Context } from 'cordis'

export const fullPluginsAll = ['structured-output', 'depth-policy', 'tree-budget', 'session-files', 'subagent-tool', 'tracing'] as const
export type FullPlugin = (typeof fullPluginsAll)[number]

/** TreeBudget limits that are set, so every check runs, and never reached. */
export const unreachable = { maxConcurrent: 1e9, maxChildren: 1e12, maxTokens: 1e12, maxModelRequests: 1e12 }

let spans: { exporter: InMemorySpanExporter; provider: BasicTracerProvider } | undefined

/**
 * The process's span pipeline, registered once as the global tracer provider: a
 * `BatchSpanProcessor`, as a production host configures it (the SDK recommends
 * `SimpleSpanProcessor` for tests and debugging), in front of an in-memory exporter. Its queue
 * holds 65,536 spans where the SDK's default holds 2,048: the cycle never yields to the event loop,
 * and the in-memory exporter reports each export done on a timer, so a window's spans wait in the
 * queue until the window ends, and a default queue would drop all but 2,560 of a window's 20,000
 * (the phases check that none is dropped). Nothing is sampled away.
 */
function spanPipeline(): NonNullable<typeof spans> {
  if (spans) return spans
  const exporter = new InMemorySpanExporter()
  const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter, { maxQueueSize: 2 ** 16 })] })
  if (!trace.setGlobalTracerProvider(provider)) throw new Error('another global tracer provider is registered')
  spans = { exporter, provider }
  return spans
}

/** A folder under the system's temp dir, removed when the process exits. */
async function temporaryDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-full-'))
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }))
  return dir
}

export interface ProductionPlugins {
  /** Waits for SessionFiles' writes and exports the spans still queued. */
  flush(): Promise<void>
  /** Empties the span exporter (it keeps every span it was given). */
  dropSpans(): void
  /** Spans exported so far (after `flush()`: every span ended). */
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
  const tracing = has('tracing') ? spanPipeline() : undefined
  if (tracing) await root.plugin((await import('../plugins/tracing/index.ts')).default, {})
  return {
    flush: async () => {
      await flushFiles()
      await tracing?.provider.forceFlush()
    },
    // the exporter is the process's: any host empties it
    dropSpans: () => spans?.exporter.reset(),
    spansRecorded: () => tracing?.exporter.getFinishedSpans().length ?? 0,
    filesWritten: async () => (dir ? (await readdir(dir)).length : 0),
  }
}
