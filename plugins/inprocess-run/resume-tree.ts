/**
 * Whole-tree resume (SPEC §14): the root and every stored descendant published again, each owned
 * by its parent as before, every open turn closed, then `subagent/resumed` for the plugins that
 * rebuild what they keep per tree (the budget's counts, background deliveries).
 */
import type { Context } from 'cordis'
import { SubagentError } from '../../lib/errors.ts'
import { closingEvents } from '../../lib/session/open-turn.ts'
import type { Agent, AgentHandle, ResumedTree, ResumedTreeInfo } from '../../lib/types.ts'
import type { Dispatch } from '../../cordis-glue/bridge.ts'
import type { Agents, StoredSession } from '../host/index.ts'
import { restoreScope } from './child-scope.ts'

/** What a resume needs of the driver. */
export interface ResumeServices {
  agents: Agents
  dispatch: Dispatch
  /** Where the resume answers `session/load` for the sessions it already read. */
  root: Context
  /** Root ids being resumed in this process right now (a second resume of one is refused). */
  resuming: Set<string>
}

export function alreadyRunning(rootId: string): SubagentError {
  return new SubagentError('INVALID_SESSION', `tree ${rootId} is already running in this process`)
}

/** One stored agent of the tree, parents before children. */
interface Member {
  id: string
  stored: StoredSession
  /** The parent's id; none for the root. */
  parentId?: string
}

/**
 * Reads the tree from the stores, checks it, and publishes it. Rejects — with nothing published —
 * when an agent of the tree is published here (`tree <rootId> is already running in this
 * process`), when the root was disposed (`tree <rootId> was disposed and cannot be resumed`),
 * when a store cannot list or load a session (its error), or when a store's hook refuses the
 * root's creation (a lease held elsewhere).
 */
export async function resumeTree(rootId: string, services: ResumeServices): Promise<ResumedTree> {
  if (typeof rootId !== 'string' || !rootId) throw new TypeError('tree root id must be a non-empty string')
  const { agents, resuming } = services
  if (resuming.has(rootId) || agents.get(rootId)) throw alreadyRunning(rootId)
  resuming.add(rootId)
  try {
    const members = await readTree(rootId, services)
    return await publish(rootId, members, services)
  } finally {
    resuming.delete(rootId)
  }
}

/** Every stored agent of the tree, root first, each after its parent; checked, nothing published. */
async function readTree(rootId: string, { agents, dispatch }: ResumeServices): Promise<Member[]> {
  const load = async (id: string): Promise<StoredSession> => {
    if (agents.get(id)) throw alreadyRunning(rootId)
    const stored = (await dispatch.ask('session/load', [id])) as StoredSession | undefined
    if (!stored) throw new SubagentError('INVALID_SESSION', `no session store holds session "${id}"`)
    if (stored.header?.id !== id) {
      throw new SubagentError('INVALID_SESSION', `a session store answered session "${id}" with session "${String(stored.header?.id)}"`)
    }
    return stored
  }
  const root = await load(rootId)
  if (root.disposed) throw new SubagentError('INVALID_SESSION', `tree ${rootId} was disposed and cannot be resumed`)
  const members: Member[] = [{ id: rootId, stored: root }]
  const seen = new Set([rootId])
  // breadth first: every parent is in the list before its children
  for (let i = 0; i < members.length; i++) {
    const parentId = members[i]!.id
    const children = (await dispatch.ask('session/children', [parentId])) as string[] | undefined
    for (const id of children ?? []) {
      // a header naming an agent already in the tree (a hand-edited file) would loop
      if (typeof id !== 'string' || seen.has(id)) continue
      seen.add(id)
      const stored = await load(id)
      if (stored.disposed || stored.header.parentSession !== parentId) continue
      members.push({ id, stored, parentId })
    }
  }
  return members
}

/**
 * The resumed agent's unpublished window: the scope its start request registered, again, then its
 * open turn closed (nothing hears these appends but the store, at publication).
 */
function closeOpenTurn(agent: Agent): void {
  restoreScope(agent)
  const { session } = agent
  for (const event of closingEvents(session.events, session.header.seedLength ?? 0)) session.append(event.type, event.data as never)
}

/**
 * Publishes the members in order, each owned by its parent; on a failure, disposes what was
 * published and rethrows. The stores are not read again: a listener put first answers
 * `session/load` for these ids with what `readTree` checked.
 */
async function publish(rootId: string, members: readonly Member[], services: ResumeServices): Promise<ResumedTree> {
  const { agents, root } = services
  const byId = new Map(members.map((member) => [member.id, member.stored]))
  const answer = root.on('session/load', (id) => byId.get(id), { prepend: true })
  const handles = new Map<Agent, AgentHandle>()
  const published = new Map<string, Agent>()
  let rootHandle: AgentHandle | undefined
  try {
    for (const member of members) {
      const owner = member.parentId === undefined ? undefined : published.get(member.parentId)
      const handle = await agents.resume(member.id, owner ? { owner, setup: closeOpenTurn } : { setup: closeOpenTurn })
      rootHandle ??= handle
      handles.set(handle.agent, handle)
      published.set(member.id, handle.agent)
    }
  } catch (error) {
    // the children go with the root (each is owned by its parent)
    await rootHandle?.dispose().catch(() => {})
    throw error
  } finally {
    answer()
  }
  const [rootAgent, ...descendants] = [...published.values()]
  const info: ResumedTreeInfo = {
    rootId,
    root: rootAgent!,
    agents: descendants,
    handleOf: (agent) => handles.get(agent),
  }
  if (services.dispatch.has('subagent/resumed')) services.dispatch.emit('subagent/resumed', [info])
  const dispose = rootHandle!.dispose
  return { root: rootAgent!, agents: descendants, dispose }
}
