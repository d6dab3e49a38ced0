import { randomUUID } from 'node:crypto'
import { type Context, type EventOptions, getTraceable, Service, symbols } from 'cordis'
import { subscribeAbort } from '../../../lib/abort-signal.ts'
import { rawService } from '../../../lib/dispatch.ts'
import { AgentDisposedError, SubagentError, thrownMessage } from '../../../lib/errors.ts'
import type { Agent, AgentHandle, AgentOptions, CreateAgentOptions, SessionEvent, SessionHeader } from '../../../lib/types.ts'
import { AgentScope, installScoped, kScope, type Listener, scopedEvents, scopeOf, skipShadow } from '../scope.ts'
import type { Sessions } from '../sessions/index.ts'
import type { SessionLog } from '../sessions/session-store.ts'
import { HostAgent } from './agent.ts'
import type { LoopServices, PreStepDecision } from './loop.ts'

export type { PreStepDecision }
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
  }
}

/** A session as a store hands it back for `resume`. */
export interface StoredSession {
  header: SessionHeader
  events: readonly SessionEvent[]
}

/** `create` options plus the host's extension: an explicit owner agent. */
export interface CreateOptions extends CreateAgentOptions {
  /**
   * The agent that owns the new one, exactly as if `owner.ctx.agents.create()` had been called:
   * disposing the owner disposes it. Defaults to the agent whose context makes the call.
   */
  owner?: Agent
}

interface AgentRecord {
  readonly agent: HostAgent
  readonly handle: AgentHandle
  /** Agents this one owns; made on first use. */
  children?: Set<AgentRecord>
  owner?: AgentRecord
  /** Removes the "dispose with the creating plugin" effect, for agents owned by a plugin. */
  release?: () => void
  disposal?: Promise<void>
}

function isPositiveSafeInteger(value: unknown): boolean {
  return Number.isSafeInteger(value) && (value as number) > 0
}

/** Validates and freezes agent options (SPEC §1.3). */
function freezeOptions(options: AgentOptions | undefined): Readonly<AgentOptions> {
  if (options === undefined) return Object.freeze({})
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new SubagentError('INVALID_OPTIONS', 'agent options must be an object')
  }
  for (const key of ['maxTokens', 'maxSteps'] as const) {
    if (options[key] !== undefined && !isPositiveSafeInteger(options[key])) {
      throw new SubagentError('INVALID_OPTIONS', `agent option ${key} must be a positive safe integer`)
    }
  }
  for (const key of ['provider', 'model'] as const) {
    if (options[key] !== undefined && typeof options[key] !== 'string') {
      throw new SubagentError('INVALID_OPTIONS', `agent option ${key} must be a string`)
    }
  }
  return Object.freeze({ ...options })
}

const createOptionKeys = ['owner', 'sessionId', 'header', 'seed', 'agentOptions', 'signal', 'setup'] as const

/**
 * A plain copy of `create`/`resume` options, each field read once. Throws a `TypeError` naming the
 * field when the options are not an object or one of their getters throws.
 */
function readCreateOptions(options: unknown, entry: 'create' | 'resume'): CreateOptions {
  if (options === undefined) return {}
  if (typeof options !== 'object' || options === null) throw new TypeError(`agent ${entry} options must be an object`)
  const copy: Record<string, unknown> = {}
  for (const key of createOptionKeys) {
    let value: unknown
    try {
      value = (options as Record<string, unknown>)[key]
    } catch (error) {
      throw new TypeError(`agent ${entry} options ${key} could not be read: ${thrownMessage(error)}`, { cause: error })
    }
    if (value !== undefined) copy[key] = value
  }
  return copy as CreateOptions
}

function abortError(id: string, signal: AbortSignal): Error {
  const reason: unknown = signal.reason
  if (reason instanceof Error) return reason
  return new SubagentError('CREATION_ABORTED', `agent "${id}" creation aborted`, { cause: reason })
}

/** Never fulfils; rejects when the signal aborts. Detaches its listener through `settle`. */
function abortRace(id: string, signal: AbortSignal): { promise: Promise<never>; settle: () => void } {
  let settle!: () => void
  const promise = new Promise<never>((_, reject) => {
    // one listener per signal however many creations share it (see lib/abort-signal.ts)
    settle = subscribeAbort(signal, () => reject(abortError(id, signal)))
  })
  promise.catch(() => {})
  return { promise, settle }
}

/**
 * Unwinds the agent's scope. A plain agent gets a cleared one too: a scope marked disposed is how
 * the tools service refuses a call made for an agent that is gone.
 */
function markDisposed(agent: HostAgent): void {
  ;(agent[kScope] ??= new AgentScope(agent)).clear()
}

/**
 * A host service as seen from an agent's scope context: `ctx` (the caller, which is what a host
 * service method reads from cordis's tracing proxy) is the scope context, `rawService` still finds
 * the service, and everything else, writes included, goes to the service itself. cordis's own
 * proxy builds named handler closures and looks its `reflect` service up again on every method
 * access; this is one small proxy per access.
 */
function callerView<T extends object>(service: T, caller: Context): T {
  return new Proxy(service, {
    get: (target, prop, receiver) =>
      prop === 'ctx' || prop === symbols.caller ? caller : prop === symbols.original ? target : Reflect.get(target, prop, receiver),
  })
}

/** The plugin that backs an agent's scope context: the fiber itself is the point. */
function agentScopePlugin(): void {}

/** Agents and their creation transaction (SPEC §1.3). */
export class Agents extends Service {
  // cordis calls service methods through a tracing proxy, where #private fields cannot be read
  private readonly records = new Map<string, AgentRecord>()
  private readonly fiberAgents = new WeakMap<Context['fiber'], Set<AgentRecord>>()
  private readonly scopePrototypes = new WeakMap<Context, Context>()
  private services!: LoopServices & { sessions: Sessions }

  constructor(ctx: Context) {
    super(ctx, 'agents')
    skipShadow(this)
  }

  /** Wires the other host services; called once by the host. */
  attach(services: LoopServices & { sessions: Sessions }): void {
    this.services = services
  }

  get(id: string): Agent | undefined {
    return this.records.get(id)?.agent
  }

  list(): Agent[] {
    return [...this.records.values()].map((record) => record.agent)
  }

  /** The scope of a published agent, by id (sessions share their agent's id). */
  scopeOf(id: string): AgentScope | undefined {
    return this.records.get(id)?.agent[kScope]
  }

  /**
   * Runs the creation transaction. Rejects at once for an aborted signal; otherwise builds the
   * agent unpublished, awaits `setup` raced against the signal, then publishes. Any failure tears
   * down everything made so far before rejecting, so a rejected create leaves no trace.
   */
  create(options: CreateOptions = {}): Promise<AgentHandle> {
    // `this` is cordis's tracing proxy: read the caller once, then run on the raw service
    const caller = this.ctx
    let read: CreateOptions
    try {
      read = readCreateOptions(options, 'create')
    } catch (error) {
      return Promise.reject(error)
    }
    const owner = read.owner ?? scopeOf(caller)?.agent
    return rawService(this).transaction(read, owner, caller)
  }

  /**
   * Reads a stored session through `session/load` (e.g. from `SessionFiles`) and publishes its
   * agent with the creation transaction. Rejects with the first store's error, or
   * `no session store holds session "<id>"`, when no store holds it; a rejected resume leaves no
   * agent, session or registration behind.
   */
  async resume(id: string, options: Omit<CreateOptions, 'seed' | 'sessionId' | 'header'> = {}): Promise<AgentHandle> {
    options = readCreateOptions(options, 'resume')
    if (typeof id !== 'string' || !id) throw new TypeError('session id must be a non-empty string')
    if (this.records.has(id)) throw new SubagentError('INVALID_SESSION', `agent "${id}" is already live`)
    const stored = (await this.services.dispatcher.ask(undefined, 'session/load', id)) as StoredSession | undefined
    if (!stored) throw new SubagentError('INVALID_SESSION', `no session store holds session "${id}"`)
    const storedId: unknown = (stored.header as Partial<SessionHeader> | undefined)?.id
    if (storedId !== id) {
      throw new SubagentError('INVALID_SESSION', `a session store answered session "${id}" with session "${String(storedId)}"`)
    }
    return rawService(this).transaction(options, options.owner ?? scopeOf(this.ctx)?.agent, this.ctx, stored)
  }

  private async transaction(
    options: CreateOptions,
    ownerAgent: Agent | undefined,
    callerCtx: Context,
    stored?: StoredSession,
  ): Promise<AgentHandle> {
    if (typeof options !== 'object' || options === null) throw new TypeError('agent create options must be an object')
    const { signal, setup } = options
    if (signal !== undefined && !(signal instanceof AbortSignal)) throw new TypeError('agent create signal must be an AbortSignal')
    if (setup !== undefined && typeof setup !== 'function') throw new TypeError('agent create setup must be a function')
    const id = stored?.header.id ?? options.sessionId ?? randomUUID()
    if (signal?.aborted) throw abortError(id, signal)
    if (typeof id !== 'string' || !id) throw new TypeError('sessionId must be a non-empty string')
    if (this.records.has(id) || this.services.sessions.get(id)) {
      throw new SubagentError('INVALID_SESSION', `session "${id}" already exists`)
    }
    const agentOptions = freezeOptions(options.agentOptions)
    const session = stored
      ? this.services.sessions.restore(stored.header, stored.events)
      : this.services.sessions.build({ ...options.header, id, createdAt: Date.now() }, options.seed)
    const owner = ownerAgent ? this.records.get(ownerAgent.id) : undefined
    if (ownerAgent && owner?.agent !== ownerAgent) {
      throw new SubagentError('INVALID_OPTIONS', `owner agent "${String(ownerAgent.id)}" is not live`)
    }
    const agent = new HostAgent(id, session, agentOptions, this.services, this.scopeFactory(owner, callerCtx))
    const record = this.makeRecord(agent)
    if (setup) {
      const race = signal ? abortRace(id, signal) : undefined
      try {
        const running = Promise.resolve().then(() => setup(agent))
        await (race ? Promise.race([running, race.promise]) : running)
        if (signal?.aborted) throw abortError(id, signal)
      } catch (error) {
        await this.rollback(record)
        throw error
      } finally {
        race?.settle()
      }
    }
    try {
      this.publish(record, session, owner, owner ? undefined : callerCtx)
    } catch (error) {
      await this.rollback(record)
      throw error
    }
    return record.handle
  }

  private makeRecord(agent: HostAgent): AgentRecord {
    const record: AgentRecord = {
      agent,
      handle: Object.freeze({ agent, dispose: () => (record.disposal ??= this.disposeRecord(record)) }),
    }
    return record
  }

  /**
   * Makes the agent visible. Throws, with nothing published, when the id was taken or the owner
   * (agent or plugin context) went away while setup ran.
   */
  private publish(record: AgentRecord, session: SessionLog, owner: AgentRecord | undefined, ownerCtx?: Context): void {
    const { agent } = record
    if (this.records.has(agent.id) || this.services.sessions.get(agent.id)) {
      throw new SubagentError('INVALID_SESSION', `session "${agent.id}" already exists`)
    }
    if (owner && (owner.disposal || this.records.get(owner.agent.id) !== owner)) {
      throw new SubagentError('CREATION_ABORTED', `owner agent "${owner.agent.id}" was disposed before agent "${agent.id}" was published`)
    }
    if (ownerCtx) {
      // an agent made through a plugin's context goes with that plugin; unloading it awaits the disposal
      let owned: Set<AgentRecord>
      try {
        owned = this.ownedBy(ownerCtx)
      } catch (error) {
        throw new SubagentError('CREATION_ABORTED', `the context creating agent "${agent.id}" was disposed before it was published`, { cause: error })
      }
      owned.add(record)
      record.release = () => void owned.delete(record)
    }
    this.services.sessions.publish(session)
    this.records.set(agent.id, record)
    if (owner) {
      record.owner = owner
      ;(owner.children ??= new Set()).add(record)
    }
    const scope = agent[kScope]
    this.services.dispatcher.emit(scope, 'agent/created', agent)
  }

  /**
   * The agents a plugin's fiber owns. One cordis effect per fiber (made with its first agent)
   * disposes them all when the plugin unloads, so creating an agent spends no effect of its own.
   * Throws cordis's inactive-context error for a disposed fiber.
   */
  private ownedBy(ctx: Context): Set<AgentRecord> {
    const fiber = ctx.fiber
    fiber.assertActive()
    let owned = this.fiberAgents.get(fiber)
    if (owned) return owned
    const agents = new Set<AgentRecord>()
    ctx.effect(() => {
      this.fiberAgents.set(fiber, agents)
      return async () => {
        this.fiberAgents.delete(fiber)
        await Promise.allSettled([...agents].map((record) => record.handle.dispose()))
      }
    }, 'ctx.agents.create()')
    owned = agents
    return owned
  }

  /**
   * Makes an agent's scope context on first demand. Built outside `transaction`, so the agent does
   * not keep that call's closure context (its options, setup and signal) alive for its whole life.
   */
  private scopeFactory(owner: AgentRecord | undefined, callerCtx: Context): (agent: HostAgent) => Context {
    return (agent) => this.createScope(agent, owner ? owner.agent.ctx : callerCtx)
  }

  /**
   * The agent's scope context. Registrations made directly through it (tools, guards, sections,
   * model routes, listeners for events about agents) go into the agent's tables and need no cordis
   * fiber; the fiber, a child of the owner's, is made on first demand (`ctx.fiber`: an effect, a
   * sub-plugin, any other listener) and disposed with the agent. The context itself holds only its
   * scope: everything else is on a prototype shared by every agent with the same owner context.
   */
  private createScope(agent: HostAgent, ownerCtx: Context): Context {
    const scope = (agent[kScope] ??= new AgentScope(agent))
    const ctx = Object.create(this.scopePrototype(ownerCtx)) as Context
    Object.defineProperty(ctx, kScope, { value: scope })
    scope.ctx = ctx
    return ctx
  }

  /**
   * What every scope context under `ownerCtx` inherits: the host's services as accessors (the scope
   * declares no `inject`, and cordis's lookup of a service it did not inject costs a stack capture
   * and a waterfall on every access), `fiber`, and an `on` that keeps listeners for events about
   * the agent in its tables. Made once per owner context and kept as long as that context lives.
   */
  private scopePrototype(ownerCtx: Context): Context {
    const known = this.scopePrototypes.get(ownerCtx)
    if (known) return known
    const base = ownerCtx.extend() as Context
    const { sessions, tools, systemPrompt, models } = this.services
    const services = { sessions, tools, systemPrompt, models, agents: this }
    for (const name of Object.keys(services) as (keyof typeof services)[]) {
      const service = rawService(services[name])
      Object.defineProperty(base, name, {
        get(this: Context) {
          return scopeOf(this)?.ctx === this ? callerView(service, this) : getTraceable(this, service)
        },
      })
    }
    const agents = this
    Object.defineProperty(base, 'fiber', {
      get(this: Context) {
        const scope = scopeOf(this)!
        return scope.fiber ?? agents.createFiber(scope, ownerCtx)
      },
    })
    const inherited = Object.getPrototypeOf(base) as Context
    Object.defineProperty(base, 'on', {
      value: function on(this: Context, name: string, listener: Listener, options?: boolean | EventOptions) {
        const { prepend = false, global = false } = typeof options === 'object' ? options : { prepend: !!options }
        // only the scope context itself: a sub-plugin's context inherits this `on` and gets cordis's
        if (scopeOf(this)?.ctx !== this || typeof name !== 'string' || !scopedEvents.has(name) || global) {
          // cordis's own `on`, resolved for the actual receiver
          const cordisOn = Reflect.get(inherited, 'on', this) as Context['on']
          return Reflect.apply(cordisOn, this, [name, listener, options])
        }
        if (typeof listener !== 'function') throw new TypeError(`listener for "${name}" must be a function`)
        return installScoped(this, `ctx.on(${JSON.stringify(name)})`, (target) => target!.addHook(name, listener, prepend))
      },
    })
    this.scopePrototypes.set(ownerCtx, base)
    return base
  }

  private createFiber(scope: AgentScope, ownerCtx: Context): Context['fiber'] {
    if (scope.isDisposed) throw new AgentDisposedError(scope.agent.id)
    // cordis's stack captures are paid here in full (≈35 µs): lowering Error.stackTraceLimit around
    // plugin() would also strip the stacks of any listener it calls synchronously
    return (scope.fiber = ownerCtx.plugin(agentScopePlugin).ctx.fiber)
  }


  /** Undoes an unpublished agent: any turn setup started, its scope and registrations. */
  private async rollback(record: AgentRecord): Promise<void> {
    const { agent } = record
    agent.closed = true
    const release = record.release
    record.release = undefined
    release?.()
    // a turn that setup started is part of what the failed create made
    agent.cancel({ kind: 'disposed' })
    await agent.whenIdle()
    const scope = agent[kScope]
    try {
      if (scope?.fiber) await scope.fiber.dispose()
    } finally {
      markDisposed(agent)
    }
  }

  /** Disposes every live agent (host unload). */
  async disposeAll(): Promise<void> {
    await Promise.allSettled([...this.records.values()].map((record) => record.handle.dispose()))
  }

  private async disposeRecord(record: AgentRecord): Promise<void> {
    const { agent } = record
    agent.closed = true
    agent.cancel({ kind: 'disposed' })
    const children = record.children ? [...record.children].map((child) => child.handle.dispose()) : []
    await agent.whenIdle()
    const settled = await Promise.allSettled(children)
    let failure: unknown = settled.find((entry) => entry.status === 'rejected')?.reason
    const scope = agent[kScope]
    try {
      if (scope?.fiber) await scope.fiber.dispose()
    } catch (error) {
      failure ??= error
    }
    markDisposed(agent)
    this.records.delete(agent.id)
    record.owner?.children?.delete(record)
    const release = record.release
    record.release = undefined
    release?.()
    this.services.dispatcher.emit(undefined, 'agent/disposed', agent)
    this.services.sessions.remove(agent.id)
    if (failure !== undefined) throw failure
  }
}
