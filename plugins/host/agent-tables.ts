/**
 * Registrations a driver plugin makes for one agent it equips (a structured child's capture
 * runtime), straight into the agent's own tables: what the same registration through the agent's
 * own context does, without making that context, a `callerView` of a service or a remover. They
 * live as long as the agent and go with its tables when it is disposed.
 */
import type { Listener } from '../../lib/dispatch.ts'
import { AgentDisposedError } from '../../lib/errors.ts'
import type { Agent } from '../../lib/types.ts'
import { type AgentScope, assertListener, scopedEvents, scopeOf } from './scope.ts'

/**
 * The tables of `agent`, open for registrations. Throws a `TypeError` for an agent this host did
 * not make and `AgentDisposedError` for one that is gone (as a registration through its context would).
 */
export function openScopeOf(agent: Agent): AgentScope {
  const scope = scopeOf(agent)
  if (!scope) throw new TypeError('agent registration needs an agent made by the host')
  if (scope.isDisposed) throw new AgentDisposedError(scope.agent.id)
  return scope
}

/**
 * Adds `listener` for `name`, an event about one agent (`scopedEvents`: `tools/result`,
 * `system-prompt/assemble`, `agent/turn-stop`, …), for `agent` alone and for its lifetime, after
 * the listeners it has: `agent.ctx.on(name, listener)` without the context. Throws a `TypeError`
 * naming the event for any other event or a non-function, and what `openScopeOf` throws.
 */
export function listenFor(agent: Agent, name: string, listener: Listener): void {
  assertScopedEvent(name)
  assertListener(name, listener)
  openScopeOf(agent).keepHook(name, listener, false)
}

/** Only an event about one agent has listeners of an agent's own (`scopedEvents`). */
function assertScopedEvent(name: string): void {
  if (!scopedEvents.has(name)) throw new TypeError(`"${name}" is not an event about one agent`)
}

/** What `listenersOf` answers for an agent without listeners of its own for the event. */
const noListeners: readonly Listener[] = Object.freeze([])

/**
 * The listeners of `name` that `agent` alone has (registered through its context, one derived from
 * it, or `listenFor`), in order, as a new array: a snapshot. An empty frozen array for none, or
 * for something that is not an agent of this host. Global listeners are not in it. Throws a
 * `TypeError` naming the event for one that is not about one agent: a listener of such an event
 * registered through the agent's context is a global one, so an empty answer would mislead.
 */
export function listenersOf(agent: Agent, name: string): readonly Listener[] {
  assertScopedEvent(name)
  const listeners = scopeOf(agent)?.hooksFor(name)
  return listeners?.length ? listeners.slice() : noListeners
}
