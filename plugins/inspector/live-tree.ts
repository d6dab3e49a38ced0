/**
 * The live agent tree behind the inspector page, folded lazily. The host's hot path only records
 * that an agent exists (`track`) and when its run settled (`settle`); the views are brought up to
 * date from the sessions' own event lists when someone reads them (`sync`, at most once per flush
 * window while the page is open). A host cycle then pays no listener per session event, and the
 * folding of a whole window runs in one batch, outside the cycles.
 */
import { type AgentView, applyEvent, type BudgetLeft, viewOfHeader } from '../../lib/session/agent-view.ts'
import type { Session, SessionEvent } from '../../lib/types.ts'
import type { InspectorSource } from './server.ts'

/** A published session and how far its events are folded into its view. */
interface Watched {
  readonly session: Session
  readonly view: AgentView
  readonly seedLength: number
  folded: number
}

/** A run's end as `subagent/end` reported it, waiting for the next fold. */
interface Settled {
  readonly id: string
  readonly stopReason: string
  readonly at: number
}

export class LiveTree implements InspectorSource {
  readonly #views = new Map<string, AgentView>()
  /** Every agent's event list (the session's own array, never copied): the page's transcripts. */
  readonly #logs = new Map<string, readonly SessionEvent[]>()
  /** Created since the last fold. */
  #fresh: Session[] = []
  /** Published sessions whose events may still grow. */
  readonly #live: Watched[] = []
  #settled: Settled[] = []
  /** Views changed since the last `changed()`, each once. */
  readonly #changed = new Set<AgentView>()
  /**
   * What a root's tree budget has left (set while a `TreeBudget` is loaded): asked for the roots
   * at a fold that changed something, since only a change in the tree can spend from it.
   */
  budgetOf: ((rootId: string) => BudgetLeft | undefined) | undefined

  /**
   * `published()` lists the sessions still published (read once per fold: any other session is
   * disposed, and its events cannot grow any more); `clock` stamps turn and run ends (epoch ms).
   */
  constructor(
    private readonly published: () => readonly Session[],
    private readonly clock: () => number = Date.now,
  ) {}

  /** Hot path: remembers a published session. Its view is built at the next fold; a session tracked twice is shown once. */
  track(session: Session): void {
    this.#fresh.push(session)
  }

  /** Hot path: a run settled now; at the next fold its stop reason replaces the last turn's. */
  settle(id: string, stopReason: string): void {
    this.#settled.push({ id, stopReason, at: this.clock() })
  }

  /**
   * Folds everything recorded or appended since the last fold. A turn end is stamped with the
   * fold's time (so at most one fold interval late); a settled run with its settle time.
   */
  sync(): void {
    const now = this.clock()
    if (this.#fresh.length) this.#adopt()
    // a Set of the published sessions per fold: one service call, then a lookup per session
    const published = this.#live.length ? new Set(this.published()) : undefined
    let kept = 0
    for (const watched of this.#live) {
      const { session, view } = watched
      const events = session.events
      if (watched.folded < events.length) {
        for (let i = watched.folded; i < events.length; i++) applyEvent(view, events[i], watched.seedLength, now)
        watched.folded = events.length
        this.#changed.add(view)
      }
      // a disposed session's events are final: its view and transcript stay, the polling stops
      if (published?.has(session)) this.#live[kept++] = watched
    }
    this.#live.length = kept
    this.#applySettled()
    if (this.budgetOf && this.#changed.size) this.#foldBudgets(this.budgetOf)
  }

  #foldBudgets(budgetOf: (rootId: string) => BudgetLeft | undefined): void {
    for (const watched of this.#live) {
      const { view } = watched
      if (view.parentId !== undefined) continue
      const left = budgetOf(view.id)
      const before = view.budgetLeft
      if (left?.children === before?.children && left?.tokens === before?.tokens && left?.modelRequests === before?.modelRequests) continue
      view.budgetLeft = left
      this.#changed.add(view)
    }
  }

  #adopt(): void {
    const fresh = this.#fresh
    this.#fresh = []
    for (const session of fresh) {
      // the same session tracked twice
      if (this.#logs.get(session.id) === session.events) continue
      let view = this.#views.get(session.id)
      if (view) {
        // an agent resumed after its disposal: its new session replaces the old one, whose events
        // must not be folded into the view again
        this.#forgetLive(session.id)
        Object.assign(view, viewOfHeader(session.header))
      } else {
        view = viewOfHeader(session.header)
        this.#views.set(session.id, view)
      }
      const seedLength = session.header.seedLength ?? 0
      this.#logs.set(session.id, session.events)
      // folded from 0 by the loop over `#live` in this same fold
      this.#live.push({ session, view, seedLength, folded: 0 })
      this.#changed.add(view)
    }
  }

  /** Stops folding the session with this id that is being watched, if any (a rare path: a resume). */
  #forgetLive(id: string): void {
    const index = this.#live.findIndex((watched) => watched.session.id === id)
    if (index >= 0) this.#live.splice(index, 1)
  }

  #applySettled(): void {
    if (!this.#settled.length) return
    const settled = this.#settled
    this.#settled = []
    for (const { id, stopReason, at } of settled) {
      const view = this.#views.get(id)
      if (!view) continue
      view.stopReason = stopReason
      // the settle time is exact; a turn end folded later is stamped late
      if (view.status === 'idle' && (view.endedAt === undefined || at < view.endedAt)) view.endedAt = at
      this.#changed.add(view)
    }
  }

  agents(): AgentView[] {
    this.sync()
    return [...this.#views.values()]
  }

  events(id: string): readonly SessionEvent[] | undefined {
    if (this.#fresh.length) this.sync()
    return this.#logs.get(id)
  }

  problems(): string[] {
    return []
  }

  /** Folds, then returns the views changed since the last call, each once. */
  changed(): AgentView[] {
    this.sync()
    const changed = [...this.#changed]
    this.#changed.clear()
    return changed
  }
}
