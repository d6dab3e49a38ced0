/**
 * The `agents` service (SPEC §1.3): the public face over the registry (`registry.ts`), the
 * creation transaction (`creation.ts`), plugin ownership (`plugin-ownership.ts`), disposal
 * (`disposal.ts`) and option checks (`create-options.ts`). An agent's context is made in
 * `agent-context.ts`.
 */
import { type Context, Service } from 'cordis'
import { SubagentError } from '../../../lib/errors.ts'
import type { Agent, AgentHandle, AgentMeter, Session, SessionHeader } from '../../../lib/types.ts'
import { skipShadow } from '../../../cordis-glue/bridge.ts'
import { scopeOf } from '../scope.ts'
import type { Sessions } from '../sessions/index.ts'
import { AgentCreation, type StoredSession } from './creation.ts'
import { type CreateOptions, readCreateOptions } from './create-options.ts'
import type { LoopServices, PreStepDecision } from './loop.ts'
import { PluginOwnership } from './plugin-ownership.ts'
import { AgentRegistry } from './registry.ts'

export type { CreateOptions, PreStepDecision, StoredSession }
export { HostAgent, TurnCancelledError } from './agent.ts'

declare module 'cordis' {
  interface Context {
    agents: Agents
  }
  interface Events {
    /** An agent was published (end of its creation transaction). Observe-only. Scoped. @mode emit */
    'agent/created'(agent: Agent): void
    /** An agent was unregistered, after its scope was unwound. Observe-only. @mode emit */
    'agent/disposed'(agent: Agent): void
    /**
     * Before each model step. Return `next()` to enter, `{kind: 'reject'}` to end the turn
     * `blocked`, or `{kind: 'budget', limit, used?, max?}` to end it `budget` (SPEC §9), with no
     * model call. A throw ends the turn `error`. Scoped. @mode waterfall
     */
    'agent/pre-step'(
      agent: Agent,
      info: { turn: number; step: number },
      next: () => PreStepDecision | Promise<PreStepDecision>,
    ): PreStepDecision | Promise<PreStepDecision>
    /**
     * After a step's tools ran: a truthy answer ends the turn `completed`; a throw ends it `error`.
     * A promise answer is awaited (it decides in place of the listeners after it). Scoped. @mode bail
     */
    'agent/turn-stop'(agent: Agent, info: { turn: number; step: number }): unknown
    /**
     * A model request is about to be sent (after `step/start`, the system prompt and the tools),
     * in the same synchronous stretch as the send: count it here. Answering
     * `{kind: 'budget', limit, used?, max?}` stops it instead (the turn ends `budget`); any other
     * answer is ignored. A throw ends the turn `error`. Scoped. @mode bail
     */
    'agent/model-request'(
      agent: Agent,
      info: { turn: number; step: number; provider: string; model: string },
    ): Extract<PreStepDecision, { kind: 'budget' }> | undefined | void
    /**
     * Asked by `agents.resume(id)`: a session store answers with the stored header and events, or
     * `undefined` when it does not hold the session. Stores are asked one at a time, in listener
     * order, each answer awaited; the first that holds it wins. A store that throws or rejects is
     * passed over; when no store holds the session, `resume` rejects with the first such error.
     * @mode ask (serial until an answer)
     */
    'session/load'(id: string): Promise<StoredSession | undefined> | StoredSession | undefined
    /**
     * Asked by a whole-tree resume (SPEC §14): a session store answers with the ids of the stored
     * sessions, not disposed, whose header's `parentSession` is `parentId`, oldest first; or
     * `undefined` when it keeps no sessions it could list. Asked like `session/load`: one store at
     * a time, each answer awaited, the first defined answer wins. @mode ask (serial until an answer)
     */
    'session/children'(parentId: string): Promise<string[] | undefined> | string[] | undefined
    /**
     * Asked by the creation transaction of `create` and `resume` (so by `resumeTree` too) once the
     * session is built, unpublished, before `setup`: a store that leases trees to one process
     * (`SessionPostgres`) takes or checks the lease of the session's tree here. A throw or a
     * rejected promise refuses the creation (rolled back; it rejects with that error); a returned
     * promise is awaited first. Return nothing when the lease is already held, so the creation stays
     * synchronous. Without a listener nothing is asked. @mode bail
     */
    'session/lease'(session: Session): Promise<void> | void
    /**
     * A creation whose `session/lease` passed was rolled back before publication: the store drops
     * the hold it took for it. Observe-only. @mode emit
     */
    'session/lease-abandoned'(session: Session): void
  }
}

/** The host services an agent runs with; the host builds them before `Agents`. */
export interface AgentServices extends LoopServices {
  sessions: Sessions
}

/** Agents and their creation transaction (SPEC §1.3). */
export class Agents extends Service {
  // cordis calls service methods through a tracing proxy, where #private fields cannot be read
  private readonly registry = new AgentRegistry()
  private readonly creation: AgentCreation
  private readonly services: AgentServices

  constructor(ctx: Context, services: AgentServices) {
    super(ctx, 'agents')
    skipShadow(this)
    this.services = services
    const { sessions, tools, systemPrompt, models, dispatcher } = services
    this.creation = new AgentCreation({
      registry: this.registry,
      sessions,
      dispatcher,
      ownership: new PluginOwnership(),
      loop: services,
      contextServices: { sessions, tools, systemPrompt, models, agents: this },
    })
  }

  get(id: string): Agent | undefined {
    return this.registry.get(id)?.agent
  }

  list(): Agent[] {
    return [...this.registry.values()].map((record) => record.agent)
  }

  /**
   * Installs `meter` for the calling plugin's lifetime: the loop calls it directly at every step,
   * send and counted message of every agent (see `AgentMeter`). Returns its removal.
   */
  meter(meter: AgentMeter): () => void {
    const meters = this.services.meters
    return this.ctx.effect(() => {
      meters.push(meter)
      return () => {
        const index = meters.indexOf(meter)
        if (index >= 0) meters.splice(index, 1)
      }
    }, 'ctx.agents.meter()') as () => void
  }

  /**
   * Runs the creation transaction. Rejects at once for an aborted signal; otherwise builds the
   * agent unpublished, runs `setup` and publishes: a promise the setup returns is awaited first,
   * raced against the signal; after a setup that returns none (or without one) the agent is
   * published before this returns. Any failure tears down everything made so far before
   * rejecting, so a rejected create leaves no trace.
   */
  create(options: CreateOptions = {}): Promise<AgentHandle> {
    // `this` is cordis's tracing proxy: read the caller once
    const caller = this.ctx
    let read: CreateOptions
    try {
      read = readCreateOptions(options, 'create')
    } catch (error) {
      return Promise.reject(error)
    }
    return this.creation.run(read, read.owner ?? scopeOf(caller)?.agent, caller)
  }

  /**
   * Reads a stored session through `session/load` (e.g. from `SessionFiles`) and publishes its
   * agent with the creation transaction. Rejects with the first store's error, or
   * `no session store holds session "<id>"`, when no store holds it; a rejected resume leaves no
   * agent, session or registration behind.
   */
  async resume(id: string, options: Omit<CreateOptions, 'seed' | 'sessionId' | 'header'> = {}): Promise<AgentHandle> {
    const caller = this.ctx
    options = readCreateOptions(options, 'resume')
    if (typeof id !== 'string' || !id) throw new TypeError('session id must be a non-empty string')
    if (this.registry.has(id)) throw new SubagentError('INVALID_SESSION', `agent "${id}" is already live`)
    const stored = (await this.services.dispatcher.ask(undefined, 'session/load', id)) as StoredSession | undefined
    if (!stored) throw new SubagentError('INVALID_SESSION', `no session store holds session "${id}"`)
    const storedId: unknown = (stored.header as Partial<SessionHeader> | undefined)?.id
    if (storedId !== id) {
      throw new SubagentError('INVALID_SESSION', `a session store answered session "${id}" with session "${String(storedId)}"`)
    }
    return this.creation.run(options, options.owner ?? scopeOf(caller)?.agent, caller, stored)
  }

  /** Host-internal: the default `maxSteps` of every turn that starts from now on (a config update). */
  setDefaultMaxSteps(maxSteps: number): void {
    this.creation.defaultMaxSteps = maxSteps
  }

  /** Disposes every live agent (host unload). */
  async disposeAll(): Promise<void> {
    await Promise.allSettled([...this.registry.values()].map((record) => record.dispose()))
  }
}
