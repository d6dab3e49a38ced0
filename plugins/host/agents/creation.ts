/**
 * The creation transaction of `agents.create`/`resume` (SPEC §1.3): build the agent unpublished,
 * await `setup` raced against the signal, then publish. Any failure rolls back everything made so
 * far before rejecting, so a rejected creation leaves no trace.
 */
import type { Context } from 'cordis'
import { subscribeAbort } from '../../../lib/async/abort-signal.ts'
import { SubagentError } from '../../../lib/errors.ts'
import { isThenable } from '../../../lib/async/thenable.ts'
import { flatUuid } from '../../../lib/uuid.ts'
import { recordedAgentOptions } from '../../../lib/session/agent-options-record.ts'
import type { Agent, AgentHandle, AgentOptions, CreateAgentOptions, SessionEvent, SessionHeader } from '../../../lib/types.ts'
import { kScope, scopeOf } from '../scope.ts'
import { type AgentRuntime, HostAgent } from './agent.ts'
import { createAgentContext } from './agent-context.ts'
import { type CreateOptions, freezeOptions } from './create-options.ts'
import { type AgentRecord, type DisposalServices, rollBack as rollBackAgent } from './agent-record.ts'
import type { HookDispatcher } from '../scope.ts'
import type { LoopServices } from './loop.ts'
import type { PluginOwnership } from './plugin-ownership.ts'
import type { AgentRegistry } from './registry.ts'

/**
 * The caller's handle of a published agent, made as `create` resolves. The host keeps none: its
 * own disposals call `record.dispose()`, so a settled agent whose caller kept only what it needs
 * (a run keeps the agent and `dispose`) holds no handle object.
 */
function handleOf(record: AgentRecord): AgentHandle {
  // a method bound to its record with no bound arguments: smaller than a closure and its
  // context, and than a bound function that carries an arguments list. Not a bound top-level
  // function: tsx renames those (keepNames), and a bound copy of a renamed function is a
  // dictionary-mode object (≈ 0.25 KB); nor a named arrow (plugins/host/README.md, "What a turn … cost")
  return Object.freeze({ agent: record.agent, dispose: record.dispose.bind(record) })
}

/**
 * Creations whose `session/lease` passed, with the dispatcher to tell the store when one is rolled
 * back. Kept beside the records (not a field of each) so an agent without a leasing store costs
 * nothing more.
 */
const leaseHolders = new WeakMap<AgentRecord, HookDispatcher>()

/** Rolls back an unpublished agent; a store that leased its tree hears `session/lease-abandoned`. */
async function rollBack(record: AgentRecord): Promise<void> {
  try {
    await rollBackAgent(record)
  } finally {
    const dispatcher = leaseHolders.get(record)
    if (dispatcher) {
      leaseHolders.delete(record)
      dispatcher.emit(undefined, 'session/lease-abandoned', record.agent.session)
    }
  }
}

/** A session as a store hands it back for `resume`. */
export interface StoredSession {
  header: SessionHeader
  events: readonly SessionEvent[]
  /**
   * Set by the store when the session's agent was disposed (SPEC §14): `resume` ignores it, a
   * whole-tree resume never republishes it.
   */
  disposed?: boolean
}

/**
 * A new agent's header fields: the caller's, plus (unless the caller set it) the options the
 * agent runs with, as a store may keep them (SPEC §14: secret-free JSON).
 */
function newHeader(header: CreateAgentOptions['header'], id: string, options: Readonly<AgentOptions>): Record<string, unknown> {
  const fields: Record<string, unknown> = { ...header, id, createdAt: Date.now() }
  if (fields.agentOptions === undefined) {
    const recorded = recordedAgentOptions(options)
    if (recorded !== undefined) fields.agentOptions = recorded
  }
  return fields
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
    // one listener per signal however many creations share it (see lib/async/abort-signal.ts)
    settle = subscribeAbort(signal, () => reject(abortError(id, signal)))
  })
  promise.catch(() => {})
  return { promise, settle }
}

/**
 * Rolls back the agent of a setup that threw (or saw the signal abort), then rejects: with the
 * signal's error when it aborted, else with `error`.
 */
async function rejectFailedSetup(
  record: AgentRecord,
  pending: PromiseLike<unknown> | undefined,
  signal: AbortSignal | undefined,
  error: unknown,
): Promise<never> {
  // the setup's later rejection has nobody left to hear it
  if (pending) Promise.resolve(pending).catch(() => {})
  await rollBack(record)
  // an abort that came first wins, as in the race a returned promise meets (SPEC §1.3)
  throw signal?.aborted ? abortError(record.agent.id, signal) : error
}

/** Rolls back an unpublished agent, then rejects with `error`. */
async function rejectAfterRollBack(record: AgentRecord, error: unknown): Promise<never> {
  await rollBack(record)
  throw error
}

export interface CreationServices extends DisposalServices {
  registry: AgentRegistry
  ownership: PluginOwnership
  loop: LoopServices
  /** What an agent's context carries, by name (the host's services). */
  contextServices: Record<string, object>
}

/** Runs creation transactions against one host's services. */
export class AgentCreation {
  readonly #services: CreationServices
  /** Shared by every agent: no closure per agent. */
  readonly #runtime: AgentRuntime

  constructor(services: CreationServices) {
    this.#services = services
    const { contextServices } = services
    this.#runtime = { ...services.loop, createContext: (agent) => createAgentContext(scopeOf(agent), contextServices), disposal: services }
  }

  /**
   * Creates and publishes an agent owned by `ownerAgent` (else by the plugin of `callerCtx`), from
   * `stored` when resuming. Rejects at once for an aborted signal or bad options (a `TypeError`
   * naming the field, `INVALID_OPTIONS`, `INVALID_SESSION` for a taken id), with the setup's or
   * the signal's error, or `CREATION_ABORTED` when the owner went away before publication.
   */
  run(options: CreateOptions, ownerAgent: Agent | undefined, callerCtx: Context, stored?: StoredSession): Promise<AgentHandle> {
    // not an async function: a creation whose setup returns no promise (or that has none: every
    // plain child, and a structured one) runs from its checks to its publication synchronously,
    // and needs no generator nor a second promise for it
    let record: AgentRecord
    let owner: AgentRecord | undefined
    let signal: AbortSignal | undefined
    let setup: CreateOptions['setup']
    try {
      const { registry, sessions } = this.#services
      if (typeof options !== 'object' || options === null) throw new TypeError('agent create options must be an object')
      signal = options.signal
      setup = options.setup
      if (signal !== undefined && !(signal instanceof AbortSignal)) throw new TypeError('agent create signal must be an AbortSignal')
      if (setup !== undefined && typeof setup !== 'function') throw new TypeError('agent create setup must be a function')
      const id = stored?.header.id ?? options.sessionId ?? flatUuid()
      if (signal?.aborted) throw abortError(id, signal)
      if (typeof id !== 'string' || !id) throw new TypeError('sessionId must be a non-empty string')
      if (registry.has(id) || sessions.get(id)) {
        throw new SubagentError('INVALID_SESSION', `session "${id}" already exists`)
      }
      // a resume without options runs the agent with the ones its header recorded (SPEC §14)
      const agentOptions = freezeOptions(options.agentOptions ?? (stored?.header.agentOptions as AgentOptions | undefined))
      const session = stored
        ? sessions.restore(stored.header, stored.events)
        : sessions.build(newHeader(options.header, id, agentOptions), options.seed)
      owner = ownerAgent ? registry.get(ownerAgent.id) : undefined
      if (ownerAgent && owner?.agent !== ownerAgent) {
        throw new SubagentError('INVALID_OPTIONS', `owner agent "${String(ownerAgent.id)}" is not live`)
      }
      const agent = new HostAgent(id, session, agentOptions, this.#runtime, owner?.agent, callerCtx)
      record = agent[kScope]
    } catch (error) {
      return Promise.reject(error)
    }
    const { dispatcher } = this.#services
    if (dispatcher.has('session/lease', undefined)) {
      // a store that leases trees (SessionPostgres) answers at once when the tree is held here
      let lease: unknown
      try {
        lease = dispatcher.bail(undefined, 'session/lease', record.agent.session)
      } catch (error) {
        return rejectAfterRollBack(record, error)
      }
      if (isThenable(lease)) return this.#continueAfterLease(record, lease, signal, setup, owner, callerCtx)
      leaseHolders.set(record, dispatcher)
    }
    return this.#continue(record, signal, setup, owner, callerCtx)
  }

  /** Waits for the lease a store is taking, then runs setup and publishes; rolls back on a refusal. */
  async #continueAfterLease(
    record: AgentRecord,
    lease: PromiseLike<unknown>,
    signal: AbortSignal | undefined,
    setup: CreateOptions['setup'],
    owner: AgentRecord | undefined,
    callerCtx: Context,
  ): Promise<AgentHandle> {
    try {
      await lease
    } catch (error) {
      await rollBack(record)
      throw error
    }
    leaseHolders.set(record, this.#services.dispatcher)
    if (signal?.aborted) return rejectAfterRollBack(record, abortError(record.agent.id, signal))
    return this.#continue(record, signal, setup, owner, callerCtx)
  }

  /** Steps (3) and (4): setup, raced against the signal, then publication. */
  #continue(
    record: AgentRecord,
    signal: AbortSignal | undefined,
    setup: CreateOptions['setup'],
    owner: AgentRecord | undefined,
    callerCtx: Context,
  ): Promise<AgentHandle> {
    if (setup) {
      // a setup that finishes at once (registrations only: a structured child's) needs neither a
      // tick nor a subscription to the signal; only a returned promise is raced against it
      let pending: PromiseLike<unknown> | undefined
      try {
        const answer = setup(record.agent)
        if (isThenable(answer)) pending = answer
        if (signal?.aborted) throw abortError(record.agent.id, signal)
      } catch (error) {
        return rejectFailedSetup(record, pending, signal, error)
      }
      if (pending) return this.#publishAfterSetup(record, pending, signal, owner, callerCtx)
    }
    try {
      this.#publish(record, owner, owner ? undefined : callerCtx)
    } catch (error) {
      return rejectAfterRollBack(record, error)
    }
    return Promise.resolve(handleOf(record))
  }

  /** Awaits the promise a setup returned (raced against `signal`), then publishes; rolls back on any failure. */
  async #publishAfterSetup(
    record: AgentRecord,
    pending: PromiseLike<unknown>,
    signal: AbortSignal | undefined,
    owner: AgentRecord | undefined,
    callerCtx: Context,
  ): Promise<AgentHandle> {
    await this.#awaitSetup(record, pending, signal)
    try {
      this.#publish(record, owner, owner ? undefined : callerCtx)
    } catch (error) {
      await rollBack(record)
      throw error
    }
    return handleOf(record)
  }

  /** Awaits a setup's promise raced against `signal`; on a failure or an abort, rolls back and rethrows. */
  async #awaitSetup(record: AgentRecord, pending: PromiseLike<unknown>, signal: AbortSignal | undefined): Promise<void> {
    const id = record.agent.id
    const race = signal ? abortRace(id, signal) : undefined
    try {
      await (race ? Promise.race([pending, race.promise]) : pending)
      if (signal?.aborted) throw abortError(id, signal)
    } catch (error) {
      await rollBack(record)
      throw error
    } finally {
      race?.settle()
    }
  }

  /** The default `maxSteps` of every turn that starts from now on (a host config update, in place). */
  set defaultMaxSteps(maxSteps: number) {
    this.#runtime.defaultMaxSteps = maxSteps
  }

  /**
   * Makes the agent visible. Throws, with nothing published, when the id was taken or the owner
   * (agent or plugin context) went away while setup ran.
   */
  #publish(record: AgentRecord, owner: AgentRecord | undefined, ownerCtx?: Context): void {
    const { registry, sessions, ownership, dispatcher } = this.#services
    const { agent } = record
    if (registry.has(agent.id) || sessions.get(agent.id)) {
      throw new SubagentError('INVALID_SESSION', `session "${agent.id}" already exists`)
    }
    if (owner && !registry.isLive(owner)) {
      throw new SubagentError('CREATION_ABORTED', `owner agent "${owner.agent.id}" was disposed before agent "${agent.id}" was published`)
    }
    if (ownerCtx) {
      // an agent made through a plugin's context goes with that plugin; unloading it awaits the disposal
      try {
        ownership.bind(ownerCtx, record)
      } catch (error) {
        throw new SubagentError('CREATION_ABORTED', `the context creating agent "${agent.id}" was disposed before it was published`, { cause: error })
      }
    }
    // the record is the agent's scope
    sessions.publish(agent.session, record)
    registry.add(record)
    dispatcher.emit(record, 'agent/created', agent)
  }
}
