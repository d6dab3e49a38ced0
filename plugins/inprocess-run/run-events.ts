/**
 * `run.events()`: a run's progress as an async iterator over its child's session events and its
 * descendants', each with its lineage. Nothing is registered until someone iterates.
 */
import type { Agent, RunEvent, Session, SessionEvent } from '../../lib/types.ts'

/** Adds a listener for every appended session event; returns its removal. */
export type SessionWatch = (listener: (session: Session, event: SessionEvent) => void) => () => void

export interface RunEventSource {
  readonly child: Agent
  readonly seedLength: number
  readonly depth: number
  readonly result: Promise<unknown>
  readonly watch: SessionWatch
  /** The session of a published agent, to follow a descendant's lineage up to the child. */
  readonly sessionOf: (id: string) => Session | undefined
}

/**
 * Yields the child's own events from its first (seeded history excluded), then every event
 * appended to the child's or a descendant's session until the result settles (fulfilled or
 * rejected: the iterator then ends; the error is the result's to report). One listener from the
 * call until `return()` (a `break`) or the settling, whichever comes first.
 */
export function runEvents(source: RunEventSource): AsyncIterableIterator<RunEvent> {
  const { child, depth } = source
  const parentId = child.session.header.parentSession ?? ''
  const buffer: RunEvent[] = child.session.events
    .slice(source.seedLength)
    .map((event) => ({ agentId: child.id, parentId, depth, event }))
  const descendants = new Set<string>([child.id])
  // more than one `next()` may be pending when a caller does not await each before the next
  const waiting: ((next: IteratorResult<RunEvent>) => void)[] = []
  let isDone = false
  let off: (() => void) | undefined

  const finish = (): void => {
    if (isDone) return
    isDone = true
    off?.()
    off = undefined
    for (const resolve of waiting.splice(0)) resolve({ value: undefined, done: true })
  }

  /** True when `session` is the child's or a descendant's: its parent chain reaches the child. */
  const isWatched = (session: Session): boolean => {
    if (descendants.has(session.id)) return true
    // a descendant is deeper than the child: the walk stops at the child's depth
    let header = session.header
    let at = header.delegationDepth ?? 0
    const chain: string[] = [session.id]
    while (at > depth && header.parentSession !== undefined) {
      if (descendants.has(header.parentSession)) {
        for (const id of chain) descendants.add(id)
        return true
      }
      const parent = source.sessionOf(header.parentSession)
      if (!parent) return false
      // a parent is never as deep as its child: a chain that does not descend (headers naming
      // themselves or each other) is no descendant's, and must not be walked without end
      const parentDepth = parent.header.delegationDepth ?? 0
      if (parentDepth >= at) return false
      chain.push(parent.id)
      header = parent.header
      at = parentDepth
    }
    return false
  }

  const onEvent = (session: Session, event: SessionEvent): void => {
    if (isDone || !isWatched(session)) return
    const header = session.header
    const item: RunEvent = { agentId: session.id, parentId: header.parentSession ?? '', depth: header.delegationDepth ?? 0, event }
    const resolve = waiting.shift()
    if (resolve) resolve({ value: item, done: false })
    else buffer.push(item)
  }

  // at once, not at the first `next()`: nothing appended in between may be missed
  off = source.watch(onEvent)
  source.result.then(finish, finish)

  const iterator: AsyncIterableIterator<RunEvent> = {
    next() {
      const item = buffer.shift()
      if (item) return Promise.resolve({ value: item, done: false })
      if (isDone) return Promise.resolve({ value: undefined, done: true })
      return new Promise((resolve) => {
        waiting.push(resolve)
      })
    },
    return() {
      buffer.length = 0
      finish()
      return Promise.resolve({ value: undefined, done: true })
    },
    [Symbol.asyncIterator]() {
      return iterator
    },
  }
  return iterator
}
