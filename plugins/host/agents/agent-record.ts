/**
 * An agent's record (its scope and bookkeeping) and how an agent ends: the rollback of an
 * unpublished one and the disposal of a published one. Both stop the agent's turn, dispose its
 * cordis fiber (if it has one) and clear its scope. The record knows its agent only as a
 * `RecordedAgent`, so the agent, the registry and this file import in one direction.
 */
import type { Context } from 'cordis'
import type { Agent, CancelCause } from '../../../lib/types.ts'
import { AgentScope, type HookDispatcher, kScope, scopeOf } from '../scope.ts'
import type { Sessions } from '../sessions/index.ts'
import type { SessionLog } from '../sessions/session-store.ts'

/** What a record and a disposal use of a host agent (`HostAgent` is one). */
export interface RecordedAgent extends Agent {
  /** Set once disposal starts: no new input is accepted. */
  closed: boolean
  readonly session: SessionLog
  readonly [kScope]: AgentRecord
}

/**
 * An agent's scope with its bookkeeping: its place in the ownership tree and its disposal. One
 * object per agent, made with it (it is the agent's scope, `scopeOf(agent)`): a settled agent lives
 * as long as its caller holds it, and a record of its own beside the scope repeated the agent and
 * its owner in one more object (40 B a live agent). A class so every field has its slot from the
 * start (no growth). The bookkeeping is `#private`, read through accessors: a caller can reach an
 * agent's scope (through its symbol) and enumerate its own keys, which stay the scope's.
 */
export class AgentRecord extends AgentScope {
  declare readonly agent: RecordedAgent
  declare readonly owner: RecordedAgent | undefined
  /** What its disposal needs: the host's, shared by every record. */
  readonly #services: DisposalServices
  #children?: Set<AgentRecord>
  #release?: () => void
  #disposal?: Promise<void>

  constructor(agent: RecordedAgent, owner: RecordedAgent | undefined, callerCtx: Context, services: DisposalServices) {
    super(agent, owner, callerCtx)
    this.#services = services
  }

  /** Agents this one owns; made on first use. */
  get children(): Set<AgentRecord> | undefined { return this.#children }
  set children(value: Set<AgentRecord> | undefined) { this.#children = value }
  /** Removes the "dispose with the creating plugin" effect, for agents owned by a plugin. */
  get release(): (() => void) | undefined { return this.#release }
  set release(value: (() => void) | undefined) { this.#release = value }
  /** Its disposal, once started. */
  get disposal(): Promise<void> | undefined { return this.#disposal }

  /** The record of the agent that owns this one; `undefined` for an agent a plugin owns. */
  get ownerRecord(): AgentRecord | undefined {
    return this.owner?.[kScope]
  }

  /**
   * Disposes the agent (`handle.dispose` is this method bound to the record): the first call starts
   * the disposal, every call returns it.
   */
  dispose(): Promise<void> {
    // `disposeAgent` itself, not a host closure that forwards to it: one call less per disposal
    return (this.#disposal ??= disposeAgent(this, this.#services))
  }
}

// shared by every disposal (a cause is frozen into the turn's end): most agents are idle by then
const disposed: CancelCause = Object.freeze({ kind: 'disposed' })

/** Unties a record from the plugin that owned it, once. */
function untie(record: AgentRecord): void {
  const release = record.release
  record.release = undefined
  release?.()
}

/** Stops the agent's turn and waits for it: the turn belongs to what is being undone. */
async function stop(agent: RecordedAgent): Promise<void> {
  agent.closed = true
  agent.cancel(disposed)
  await agent.whenIdle()
}

/**
 * Undoes an unpublished agent: any turn setup started, its scope and registrations. The scope is
 * cleared even when its fiber's disposal rejects (that rejection is passed on).
 */
export async function rollBack(record: AgentRecord): Promise<void> {
  const { agent } = record
  untie(record)
  await stop(agent)
  const scope = scopeOf(agent)
  try {
    if (scope.fiber) await scope.fiber.dispose()
  } finally {
    scope.clear()
  }
}

export interface DisposalServices {
  /** The published agents (`AgentRegistry`); a disposal unregisters its record. */
  registry: { remove(record: AgentRecord): void }
  sessions: Sessions
  dispatcher: HookDispatcher
}

/**
 * Disposes a published agent: its children first (concurrently with its own turn ending), then
 * its fiber and scope; unregisters it, emits `agent/disposed` and removes its session from
 * memory. Everything is done even when a step fails; the first failure is thrown at the end.
 */
export async function disposeAgent(record: AgentRecord, services: DisposalServices): Promise<void> {
  const { agent } = record
  agent.closed = true
  agent.cancel(disposed)
  // a leaf (every plain child) skips the settling of an empty list: ≈ 0.4 KB a disposal
  const children = record.children?.size ? [...record.children].map((child) => child.dispose()) : undefined
  await agent.whenIdle()
  let failure: unknown
  if (children) failure = (await Promise.allSettled(children)).find((entry) => entry.status === 'rejected')?.reason
  const scope = scopeOf(agent)
  try {
    if (scope.fiber) await scope.fiber.dispose()
  } catch (error) {
    failure ??= error
  }
  scope.clear()
  services.registry.remove(record)
  untie(record)
  services.dispatcher.emit(undefined, 'agent/disposed', agent)
  services.sessions.remove(agent.id)
  if (failure !== undefined) throw failure
}
