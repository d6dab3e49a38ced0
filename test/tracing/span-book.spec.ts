import { type Context as TraceContext, ROOT_CONTEXT, type Span, context, createContextKey, trace } from '@opentelemetry/api'
import { BasicTracerProvider, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-base'
import { expect } from 'chai'
import type { SubagentInfo } from '../../lib/types.ts'
import { SpanBook } from '../../plugins/tracing/span-book.ts'

/** Keeps every span started and the parent context its tracer was handed. */
class StartRecorder implements SpanProcessor {
  readonly starts: { span: Span; parent: TraceContext }[] = []
  onStart(span: Span, parent: TraceContext): void {
    this.starts.push({ span, parent })
  }
  onEnd(_span: ReadableSpan): void {}
  forceFlush(): Promise<void> {
    return Promise.resolve()
  }
  shutdown(): Promise<void> {
    return Promise.resolve()
  }
}

const requestKey = createContextKey('test request')
const otherKey = createContextKey('test other')

const info: SubagentInfo = { runId: 'child', parentId: 'parent', childId: 'child', rootId: 'parent', mode: 'spawn', depth: 1 }

/** A book on the SDK with a run and its child's request open: both starts as the tracer saw them. */
function bookWithRequest() {
  const recorder = new StartRecorder()
  const book = new SpanBook(new BasicTracerProvider({ spanProcessors: [recorder] }).getTracer('test'))
  book.runStarted(info)
  book.chatStarted('child', 'scripted', 'test')
  const [run, chat] = recorder.starts
  return { book, run: run!, chat: chat! }
}

describe('Tracing span book', () => {
  // the application's context while spans start: one value of its own, no span
  const active = ROOT_CONTEXT.setValue(requestKey, 'request-42')

  beforeEach(() => {
    context.setGlobalContextManager({
      active: () => active,
      with: (_context, fn, thisArg, ...args) => fn.call(thisArg, ...args),
      bind: (_context, target) => target,
      enable() {
        return this
      },
      disable() {
        return this
      },
    })
  })

  afterEach(() => {
    context.disable()
  })

  it("hands a child span's tracer a context with its parent span and every value of the active context", () => {
    const { book, run, chat } = bookWithRequest()
    // a root span starts in the active context itself
    expect(run.parent).to.equal(active)
    expect(trace.getSpan(chat.parent)).to.equal(run.span)
    expect(chat.parent.getValue(requestKey)).to.equal('request-42')
    expect((chat.span as unknown as ReadableSpan).parentSpanContext?.spanId).to.equal(run.span.spanContext().spanId)
    book.chatEnded('child', undefined, false)
    book.runEnded({ ...info, stopReason: 'completed' })
    expect(book.openCount).to.equal(0)
  })

  it("keeps the parent span and the active context's values in a context derived from a child's parent context", () => {
    const { book, run, chat } = bookWithRequest()
    const added = chat.parent.setValue(otherKey, 7)
    expect([trace.getSpan(added), added.getValue(requestKey), added.getValue(otherKey)]).to.deep.equal([run.span, 'request-42', 7])
    const removed = chat.parent.deleteValue(requestKey)
    expect([trace.getSpan(removed), removed.getValue(requestKey)]).to.deep.equal([run.span, undefined])
    book.closeAll()
    expect(book.openCount).to.equal(0)
  })
})
