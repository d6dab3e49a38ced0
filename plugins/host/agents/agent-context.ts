/**
 * An agent's scope context (SPEC §1 "scoped"): made on first access to `agent.ctx`, under its
 * owner's context. Registrations made directly through it (tools, guards, sections, model routes,
 * listeners for events about agents) go into the agent's tables and need no cordis fiber; the
 * fiber, a child of the owner's, is made on first demand (`ctx.fiber`: an effect, a sub-plugin,
 * any other listener) and disposed with the agent.
 *
 * The context itself holds only its scope: the service accessors, `fiber` and `on` sit on a
 * prototype made once per owner context (and host), which every agent context under that owner
 * shares. A host service read through the context is a small `callerView` naming it as the caller.
 */
import type { Context } from 'cordis'
import { AgentDisposedError } from '../../../lib/errors.ts'
import { type AgentContextParts, agentContextPrototype } from '../../../cordis-glue/bridge.ts'
import { type AgentScope, kScope, routeScopedListener, scopeOf } from '../scope.ts'

/** The plugin that backs an agent's scope context: the fiber itself is the point. */
function agentScopePlugin(): void {}

function isAgentContext(ctx: Context): boolean {
  return scopeOf(ctx)?.ctx === ctx
}

function createFiber(scope: AgentScope, ownerCtx: Context): Context['fiber'] {
  if (scope.isDisposed) throw new AgentDisposedError(scope.agent.id)
  // cordis's stack captures are paid here in full (≈35 µs): lowering Error.stackTraceLimit around
  // plugin() would also strip the stacks of any listener it calls synchronously
  return (scope.fiber = ownerCtx.plugin(agentScopePlugin).ctx.fiber)
}

/**
 * Prototypes by host (its services record) and owner context. Weak on both: a prototype lives as
 * long as its owner context, and keeps nothing of any agent.
 */
const prototypes = new WeakMap<object, WeakMap<Context, Context>>()

function prototypeFor(ownerCtx: Context, services: Record<string, object>): Context {
  let byOwner = prototypes.get(services)
  if (!byOwner) prototypes.set(services, (byOwner = new WeakMap()))
  let proto = byOwner.get(ownerCtx)
  if (!proto) {
    const parts: AgentContextParts = {
      services,
      isAgentContext,
      fiber: (ctx) => {
        // an agent's context or one derived from it: both inherit the agent's scope
        const scope = scopeOf(ctx)!
        return scope.fiber ?? createFiber(scope, ownerCtx)
      },
      route: routeScopedListener,
    }
    byOwner.set(ownerCtx, (proto = agentContextPrototype(ownerCtx, parts)))
  }
  return proto
}

/**
 * Makes `scope`'s context under its owner agent's context (else its creator's), carrying
 * `services` (the host's, by name; one record per host) and marked with the scope, and records it
 * as `scope.ctx`.
 */
export function createAgentContext(scope: AgentScope, services: Record<string, object>): Context {
  // the owner's context is made only now: a child nobody registers into costs none
  const ownerCtx = scope.owner ? scope.owner.ctx : scope.callerCtx
  const ctx = Object.create(prototypeFor(ownerCtx, services)) as Context
  // defined, not assigned: the owner agent's context on the prototype chain holds a read-only one
  Object.defineProperty(ctx, kScope, { value: scope })
  scope.ctx = ctx
  return ctx
}
