/**
 * Records spans with the SDK's in-memory exporter, registered once as the global tracer provider.
 * The registered provider delegates on every call, so a test can swap in a tracer that throws or
 * an exporter that fails without re-registering (the global can be set only once per process).
 */
import { type Span, type Tracer, type TracerProvider, trace } from '@opentelemetry/api'
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base'

/** A started span that has not ended yet is counted here. */
class OpenCounter implements SpanProcessor {
  open = 0
  onStart(): void {
    this.open++
  }
  onEnd(): void {
    this.open--
  }
  forceFlush(): Promise<void> {
    return Promise.resolve()
  }
  shutdown(): Promise<void> {
    return Promise.resolve()
  }
}

export type Failure = 'none' | 'tracer' | 'processor-throws' | 'exporter-throws' | 'exporter-fails'

/** A span processor that throws from `onEnd` while the failure is `processor-throws`. */
class FlakyProcessor implements SpanProcessor {
  constructor(private readonly failure: () => Failure) {}
  onStart(): void {}
  onEnd(): void {
    if (this.failure() === 'processor-throws') throw new Error('processor is broken')
  }
  forceFlush(): Promise<void> {
    return Promise.resolve()
  }
  shutdown(): Promise<void> {
    return Promise.resolve()
  }
}

class FlakyExporter implements SpanExporter {
  constructor(private readonly inner: InMemorySpanExporter, private readonly failure: () => Failure) {}
  export(spans: ReadableSpan[], done: (result: { code: number; error?: Error }) => void): void {
    const failure = this.failure()
    if (failure === 'exporter-throws') throw new Error('exporter is down')
    if (failure === 'exporter-fails') done({ code: 1, error: new Error('collector refused the batch') })
    else this.inner.export(spans, done)
  }
  shutdown(): Promise<void> {
    return this.inner.shutdown()
  }
}

export interface Recorder {
  /** Finished spans, in end order. */
  spans(): ReadableSpan[]
  /** Spans started and not yet ended. */
  open(): number
  failure: Failure
  reset(): void
}

let recorder: Recorder | undefined

/** The process-wide recorder; registers the provider on first use. */
export function spanRecorder(): Recorder {
  if (recorder) return recorder
  const memory = new InMemorySpanExporter()
  const counter = new OpenCounter()
  const state = { failure: 'none' as Failure }
  const sdk = new BasicTracerProvider({
    spanProcessors: [counter, new FlakyProcessor(() => state.failure), new SimpleSpanProcessor(new FlakyExporter(memory, () => state.failure))],
  })
  const provider: TracerProvider = {
    getTracer(name, version, options): Tracer {
      const inner = sdk.getTracer(name, version, options)
      return {
        startSpan(spanName, spanOptions, parent): Span {
          if (state.failure === 'tracer') throw new Error('tracer is broken')
          return inner.startSpan(spanName, spanOptions, parent)
        },
        startActiveSpan: inner.startActiveSpan.bind(inner) as Tracer['startActiveSpan'],
      }
    },
  }
  if (!trace.setGlobalTracerProvider(provider)) throw new Error('another global tracer provider is registered')
  recorder = {
    spans: () => memory.getFinishedSpans().slice(),
    open: () => counter.open,
    get failure() {
      return state.failure
    },
    set failure(value) {
      state.failure = value
    },
    reset() {
      memory.reset()
      state.failure = 'none'
    },
  }
  return recorder
}

/** `name` → names of its children, from the finished spans (for nesting assertions). */
export function spanTree(spans: readonly ReadableSpan[]): unknown[] {
  const childrenOf = (spanId: string | undefined): unknown[] =>
    spans
      .filter((span) => span.parentSpanContext?.spanId === spanId)
      .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1])
      .map((span) => {
        const children = childrenOf(span.spanContext().spanId)
        return children.length ? { [span.name]: children } : span.name
      })
  return childrenOf(undefined)
}
