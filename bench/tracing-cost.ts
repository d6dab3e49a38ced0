/**
 * What `Tracing` adds to a spawn cycle, split into the plugin's own part and the OpenTelemetry
 * SDK's (docs/performance.md, "Tracing's path"). Prints one JSON line:
 * - `tracing_cost_p50_us`, `tracing_alloc_bytes_per_cycle`: a host with `Tracing` on the SDK (a
 *   `BatchSpanProcessor` with its defaults in front of an in-memory exporter, as `--variant=full`)
 *   against a plain host in the same process. The p50 cost is the median over rounds of the two
 *   hosts' block p50 difference (blocks of 250 cycles, the order rotating every round);
 *   allocation is the median `heapUsed` growth over 20 cycles started right after a full GC;
 * - `tracing_own_p50_us`, `tracing_own_alloc_bytes_per_cycle`: the same host with its tracer
 *   switched to the API's no-op tracer: the plugin and the hooks it makes the host dispatch;
 * - `book_<processor>_cpu_us_per_cycle`, `book_<processor>_alloc_bytes_per_cycle`: the plugin's
 *   span calls of one cycle (`SpanBook`: the run's span and its request's, their attributes, the
 *   parent context) alone, without a host, on the SDK with a `batch` or `simple` span processor or
 *   none (`bare`), and on the no-op tracer (`noop`): the SDK's floor is `bare` less `noop`. CPU time
 *   includes the export work the calls leave behind (a flush after each block).
 * Run: `npm run bench:tracing` (`node --expose-gc --import tsx bench/tracing-cost.ts [--quick]`).
 */
import { ProxyTracerProvider, type Tracer, type TracerProvider, trace } from '@opentelemetry/api'
import { BasicTracerProvider, BatchSpanProcessor, InMemorySpanExporter, SimpleSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base'
import type { SubagentInfo } from '../lib/types.ts'
import Tracing from '../plugins/tracing/index.ts'
import { SpanBook } from '../plugins/tracing/span-book.ts'
import { fullGc } from './heap.ts'
import { printSummary, runBenchmark } from './report.ts'
import { type Bench, setupHost } from './spawn-host.ts'
import { median } from './stats.ts'

const quick = process.argv.includes('--quick')
const scale = (n: number) => (quick ? Math.max(2, Math.ceil(n / 10)) : n)

const exporter = new InMemorySpanExporter()
const noopTracer = new ProxyTracerProvider().getTracer('no-op')

/** An SDK provider for `processor` (none: spans are recorded and handed to nobody). */
function sdkTracer(processor: SpanProcessor | undefined): { tracer: Tracer; flush: () => Promise<void> } {
  const provider = new BasicTracerProvider({ spanProcessors: processor ? [processor] : [] })
  return { tracer: provider.getTracer('bench'), flush: () => provider.forceFlush() }
}

const pipeline = sdkTracer(new BatchSpanProcessor(exporter))
let useSdk = true
// the global provider: the SDK pipeline, or the API's no-op tracer while `useSdk` is off
const switching: TracerProvider = {
  getTracer: () => {
    const sdk = pipeline.tracer
    return {
      startSpan: (spanName, spanOptions, context) => (useSdk ? sdk : noopTracer).startSpan(spanName, spanOptions, context),
      startActiveSpan: sdk.startActiveSpan.bind(sdk) as Tracer['startActiveSpan'],
    }
  },
}

/** Exports what the pipeline holds and empties the exporter: outside timed blocks. */
async function settle(): Promise<void> {
  await pipeline.flush()
  exporter.reset()
}

/** Median `heapUsed` growth per cycle over blocks of 20 cycles (then `after()`), each after a full GC. */
async function allocPerCycle(run: () => unknown, blocks: number, after?: () => Promise<void>): Promise<number> {
  const perBlock: number[] = []
  for (let block = 0; block < blocks; block++) {
    await settle()
    await fullGc()
    const before = process.memoryUsage().heapUsed
    for (let i = 0; i < 20; i++) await run()
    await after?.()
    perBlock.push((process.memoryUsage().heapUsed - before) / 20)
  }
  return Math.round(median(perBlock))
}

/** The host comparison: plain, Tracing on the SDK, Tracing on the no-op tracer. */
async function hostCosts(): Promise<Record<string, number>> {
  const plain = await setupHost('full', { budget: null, observer: false, full: [] })
  const traced = await setupHost('full', { budget: null, observer: false, full: [] })
  await traced.root.plugin(Tracing, {})
  const hosts: { name: string; bench: Bench; sdk: boolean; p50: number[] }[] = [
    { name: 'plain', bench: plain, sdk: true, p50: [] },
    { name: 'sdk', bench: traced, sdk: true, p50: [] },
    { name: 'own', bench: traced, sdk: false, p50: [] },
  ]
  for (let i = 0; i < scale(2000); i++) {
    for (const host of hosts) {
      useSdk = host.sdk
      await host.bench.cycle()
    }
    if (i % 250 === 0) await settle()
  }
  for (let round = 0; round < scale(40); round++) {
    for (let h = 0; h < hosts.length; h++) {
      const host = hosts[(h + round) % hosts.length]!
      useSdk = host.sdk
      const times: number[] = []
      for (let i = 0; i < 250; i++) times.push(await host.bench.cycle())
      host.p50.push(median(times))
      await settle()
    }
  }
  const paired = (host: (typeof hosts)[number]) => Math.round(median(host.p50.map((p50, round) => p50 - hosts[0]!.p50[round]!)) * 100) / 100
  const alloc: Record<string, number> = {}
  for (const host of hosts) {
    useSdk = host.sdk
    alloc[host.name] = await allocPerCycle(() => host.bench.cycle(), scale(30))
  }
  useSdk = true
  return {
    plain_cycle_p50_us: Math.round(median(hosts[0]!.p50) * 100) / 100,
    tracing_cost_p50_us: paired(hosts[1]!),
    tracing_own_p50_us: paired(hosts[2]!),
    plain_alloc_bytes_per_cycle: alloc.plain!,
    tracing_alloc_bytes_per_cycle: alloc.sdk! - alloc.plain!,
    tracing_own_alloc_bytes_per_cycle: alloc.own! - alloc.plain!,
  }
}

const info: SubagentInfo = { runId: 'child', parentId: 'parent', childId: 'child', rootId: 'parent', label: 'task', mode: 'spawn', depth: 1 }
const ended: SubagentInfo = { ...info, stopReason: 'completed', usage: { inputTokens: 16, outputTokens: 1 } }

/** The calls a spawn cycle makes on the book, in the order the hooks arrive. */
function bookCycle(book: SpanBook): void {
  book.runStarted(info)
  book.turnStarted('child', 'task')
  book.chatStarted('child', 'scripted', 'bench')
  book.chatEnded('child', ended.usage, false)
  book.turnEnded('child', { kind: 'completed' })
  book.runEnded(ended)
}

/** The book alone on each tracer: CPU µs (export work included) and bytes per cycle. */
async function bookCosts(): Promise<Record<string, number>> {
  const tracers: Record<string, { tracer: Tracer; flush: () => Promise<void> }> = {
    batch: sdkTracer(new BatchSpanProcessor(exporter)),
    simple: sdkTracer(new SimpleSpanProcessor(exporter)),
    bare: sdkTracer(undefined),
    noop: { tracer: noopTracer, flush: async () => {} },
  }
  const books = Object.entries(tracers).map(([name, { tracer, flush }]) => ({ name, book: new SpanBook(tracer), flush, cpu: [] as number[] }))
  // the simple processor's exports finish on a timer
  const drain = async (flush: () => Promise<void>) => {
    await flush()
    await new Promise((resolve) => setTimeout(resolve, 1))
    exporter.reset()
  }
  for (let i = 0; i < scale(20); i++) {
    for (const { book, flush } of books) {
      for (let j = 0; j < 1000; j++) bookCycle(book)
      await drain(flush)
    }
  }
  for (let round = 0; round < scale(40); round++) {
    for (let b = 0; b < books.length; b++) {
      const entry = books[(b + round) % books.length]!
      const before = process.cpuUsage()
      for (let i = 0; i < 500; i++) bookCycle(entry.book)
      await drain(entry.flush)
      const cpu = process.cpuUsage(before)
      entry.cpu.push((cpu.user + cpu.system) / 500)
    }
  }
  const out: Record<string, number> = {}
  for (const entry of books) {
    out[`book_${entry.name}_cpu_us_per_cycle`] = Math.round(median(entry.cpu) * 100) / 100
    out[`book_${entry.name}_alloc_bytes_per_cycle`] = await allocPerCycle(() => bookCycle(entry.book), scale(15), () => drain(entry.flush))
  }
  return out
}

async function main(): Promise<void> {
  const started = performance.now()
  if (!trace.setGlobalTracerProvider(switching)) throw new Error('another global tracer provider is registered')
  const figures = { ...(await hostCosts()), ...(await bookCosts()) }
  printSummary(figures, started, quick)
  process.exit(0)
}

runBenchmark(main)
