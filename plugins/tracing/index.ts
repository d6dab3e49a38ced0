/**
 * `Tracing` (SPEC §10): OpenTelemetry spans for a delegation tree, on `@opentelemetry/api` only.
 * The application's tracer provider decides where spans go; without one, every span is a no-op.
 */
import { ProxyTracerProvider, trace } from '@opentelemetry/api'
import type { Context } from 'cordis'
import Schema from 'schemastery'
import { listenDirect, rawService, updateInPlace } from '../../cordis-glue/bridge.ts'
import { thrownMessage } from '../../lib/errors.ts'
import { isKnownEvent } from '../../lib/session/session-event.ts'
import { localizeConfig } from '../../locales/index.ts'
import type {} from '../host/index.ts'
import type {} from '../inprocess-run/index.ts'
import { SpanBook } from './span-book.ts'

export { attributes as spanAttributes, UNFINISHED_REASON } from './span-book.ts'

/** The log line of the first contained tracing failure (later ones are not logged). */
export const tracingFailedMessage = (message: string) => `tracing failed and was contained (later failures are not logged): ${message}`

// the API's no-op provider: what an unset proxy delegates to
const noopProvider = new ProxyTracerProvider().getDelegate()

/** True once the application registered a tracer provider (any, sampled or not). */
function hasTracerProvider(): boolean {
  const provider = trace.getTracerProvider()
  return !(provider instanceof ProxyTracerProvider) || provider.getDelegate() !== noopProvider
}

/** Logged (info) when the plugin loads before any tracer provider is registered. */
export const noProviderMessage = 'no OpenTelemetry tracer provider is registered: no spans are recorded until Tracing is reloaded after registering one'

/**
 * Spans, following the GenAI semantic conventions: `invoke_agent <label or id>` per run (under
 * the parent's `execute_tool subagent` span when the tool started it) and per turn of an agent
 * that is not a run; `chat <model>` per model request; `execute_tool <name>` per tool execution.
 * It meets the host and the driver only at hooks. Never throws into the host: a failing tracer or
 * exporter is contained and logged once. Unloading it ends every span it still has open. The
 * provider must be registered before the plugin loads (with none it registers no listener).
 */
export function Tracing(ctx: Context, config: Tracing.Config): void {
  const logger = ctx.logger('tracing')
  // without a provider every span would be a no-op: listen to nothing, so the host pays nothing
  if (!hasTracerProvider()) {
    logger.info(noProviderMessage)
    return
  }
  const book = new SpanBook(trace.getTracer(config?.tracerName || Tracing.TRACER_NAME))
  // a restart would end every open span as unfinished and cut the live runs' later spans loose
  // from their run's span: a new tracer name applies to the spans started after the update
  updateInPlace<Tracing.Config>(ctx, (next) => book.useTracer(trace.getTracer(next?.tracerName || Tracing.TRACER_NAME)))
  const agents = rawService(ctx.agents)
  let hasLogged = false
  const contain = (error: unknown) => {
    if (hasLogged) return
    hasLogged = true
    logger.warn(tracingFailedMessage(thrownMessage(error)))
  }

  listenDirect(ctx, 'session/event', (session, event) => {
    if (!isKnownEvent(event)) return
    try {
      switch (event.type) {
        case 'turn/start':
          book.turnStarted(session.id, session.header.label)
          break
        case 'step/start': {
          const options = agents.get(session.id)?.options
          book.chatStarted(session.id, options?.provider, options?.model)
          break
        }
        case 'assistant/message': {
          book.chatEnded(session.id, event.data.usage, event.data.interrupted === true)
          break
        }
        case 'turn/end':
          book.turnEnded(session.id, event.data.reason)
          break
      }
    } catch (error) {
      contain(error)
    }
  })

  listenDirect(ctx, 'subagent/start', (info) => {
    try {
      book.runStarted(info)
    } catch (error) {
      contain(error)
    }
  })
  listenDirect(ctx, 'subagent/end', (info) => {
    try {
      book.runEnded(info)
    } catch (error) {
      contain(error)
    }
  })
  // prepended, so the span covers the whole pipeline even when a later listener denies the call
  listenDirect(
    ctx,
    'tools/pre-execute',
    (exec, next) => {
      try {
        book.toolStarted(exec)
      } catch (error) {
        contain(error)
      }
      return next()
    },
    { prepend: true },
  )
  listenDirect(ctx, 'tools/result', (exec, result) => {
    try {
      book.toolEnded(exec, result)
    } catch (error) {
      contain(error)
    }
  })
  ctx.effect(
    () => () => {
      try {
        book.closeAll()
      } catch (error) {
        contain(error)
      }
    },
    'tracing spans',
  )
}

export namespace Tracing {
  export const inject = ['agents']
  /** The instrumentation scope name spans are recorded under, unless `tracerName` says otherwise. */
  export const TRACER_NAME = 'subagent-inprocess'
  export interface Config {
    tracerName?: string
  }
  // field descriptions: `config.tracing` in locales/*.yml
  export const Config: Schema<Config> = localizeConfig(Schema.object({ tracerName: Schema.string() }), 'tracing')
}

export default Tracing
