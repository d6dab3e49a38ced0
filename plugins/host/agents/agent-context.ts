/**
 * An agent's scope context (SPEC §1 "scoped"): made on first access to `agent.ctx`, under its
 * owner's context. Registrations made directly through it (tools, guards, sections, model routes,
 * listeners for events about agents) go into the agent's tables and need no cordis fiber; the
 * fiber, a child of the owner's, is made on first demand (`ctx.fiber`: an effect, a sub-plugin,
 * any other listener) and disposed with the agent.
 */
import type { Context } from 'cordis'
import { AgentDisposedError } from '../../../lib/errors.ts'
import { patchAgentContext } from '../cordis-bridge.ts'
import { type AgentScope, kScope, routeScopedListener } from '../scope.ts'

/** The plugin that backs an agent's scope context: the fiber itself is the point. */
function agentScopePlugin(): void {}

function createFiber(scope: AgentScope, ownerCtx: Context): Context['fiber'] {
  if (scope.isDisposed) throw new AgentDisposedError(scope.agent.id)
  // cordis's stack captures are paid here in full (≈35 µs): lowering Error.stackTraceLimit around
  // plugin() would also strip the stacks of any listener it calls synchronously
  return (scope.fiber = ownerCtx.plugin(agentScopePlugin).ctx.fiber)
}

/**
 * Makes `scope`'s context under its owner agent's context (else its creator's), carrying
 * `services` (the host's, by name) and marked with the scope, and records it as `scope.ctx`.
 */
export function createAgentContext(scope: AgentScope, services: Record<string, object>): Context {
  // the owner's context is made only now: a child nobody registers into costs none
  const ownerCtx = scope.owner ? scope.owner.ctx : scope.callerCtx
  const ctx = ownerCtx.extend() as Context
  Object.defineProperty(ctx, kScope, { value: scope })
  patchAgentContext(ctx, {
    services,
    fiber: () => scope.fiber ?? createFiber(scope, ownerCtx),
    route: routeScopedListener,
  })
  scope.ctx = ctx
  return ctx
}
