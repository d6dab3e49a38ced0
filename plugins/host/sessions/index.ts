import type { Context } from 'cordis'
import type { Session, SessionEvent, SessionHeader } from '../../../lib/types.ts'
import { untrace } from '../../../cordis-glue/bridge.ts'
import { HostService } from '../host-service.ts'
import type { AgentScope, HookDispatcher } from '../scope.ts'
import { buildHeader } from '../../../lib/session/session-header.ts'
import { type AppendObserver, SessionLog, validateSeed } from './session-store.ts'
import { SubagentError } from '../../../lib/errors.ts'
import { compactStoredSteps } from '../../../lib/session/streamed-steps.ts'

export { SessionLog, validateSeed }

declare module 'cordis' {
  interface Context {
    sessions: Sessions
  }
  interface Events {
    /**
     * After an event is appended to a published session. Observe-only: a throwing or rejecting
     * listener is contained and logged, never breaks the append. Scoped: an agent's listener hears
     * only its own session. @mode emit
     */
    'session/event'(session: Session, event: SessionEvent): void
  }
}

/**
 * Published sessions (SPEC §1.2). A session is published with its agent and removed from memory
 * when the agent is disposed; persistence (`SessionFiles`) is a separate plugin.
 */
export class Sessions extends HostService {
  // cordis calls service methods through a tracing proxy, where #private fields cannot be read
  private readonly published = new Map<string, SessionLog>()
  private readonly observer: AppendObserver

  constructor(ctx: Context, dispatcher: HookDispatcher) {
    super(ctx, 'sessions', dispatcher)
    // no method needs its caller: `ctx.sessions.get(id)` pays no tracing proxy
    untrace(this)
    // one observer shared by every published session; each session holds its agent's scope
    this.observer = (log, event) => {
      const scope = log.scope
      if (dispatcher.has('session/event', scope)) dispatcher.emit(scope, 'session/event', log, event)
    }
  }

  get(id: string): Session | undefined {
    return this.published.get(id)
  }

  list(): Session[] {
    return [...this.published.values()]
  }

  /** Builds an unpublished session: validated frozen header, validated seed plus end marker. */
  build(header: Record<string, unknown>, seed?: readonly SessionEvent[]): SessionLog {
    const frozen: SessionHeader = buildHeader(header)
    if (!seed) return new SessionLog(frozen)
    const events = validateSeed(seed)
    const log = new SessionLog(frozen, events)
    if (!events.length || events[events.length - 1].type !== 'session/end-seed') log.append('session/end-seed', {})
    return log
  }

  /**
   * Rebuilds a stored session as it was (no seed marker): for `agents.resume`. Its long streamed
   * steps are stored compactly, as the live session held them (`lib/session/streamed-steps.ts`).
   */
  restore(header: SessionHeader, events: readonly SessionEvent[]): SessionLog {
    const validated = validateSeed(events)
    compactStoredSteps(validated)
    return new SessionLog(buildHeader({ ...header }), validated)
  }

  /**
   * Makes the session visible and starts emitting `session/event` for it to the global listeners
   * and those of `scope` (its agent's, bound here once).
   */
  publish(session: SessionLog, scope: AgentScope): void {
    if (this.published.has(session.id)) {
      throw new SubagentError('INVALID_SESSION', `session "${session.id}" is already published`)
    }
    this.published.set(session.id, session)
    session.scope = scope
    session.observer = this.observer
  }

  /** Removes the session from memory (never from disk). */
  remove(id: string): void {
    const session = this.published.get(id)
    if (!session) return
    session.observer = undefined
    this.published.delete(id)
  }
}
