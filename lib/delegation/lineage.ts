/**
 * Lineage of a delegation tree (SPEC §10): which agent is the root of the tree an agent lives in.
 */
import type { Agent } from '../types.ts'

/** Deepest parent chain followed; a longer (or cyclic, hand-edited) chain stops here. */
const MAX_CHAIN = 10_000

/**
 * The root of `agent`'s tree: follows `header.parentSession` through `lookup` (the live agents)
 * up to an agent without a parent. When an ancestor is not live (a child resumed without its
 * parent), the last `parentSession` seen is the best answer there is, and is returned.
 */
export function rootIdOf(agent: Agent, lookup: (id: string) => Agent | undefined): string {
  let current = agent
  for (let hops = 0; hops < MAX_CHAIN; hops++) {
    const parentId = current.session.header.parentSession
    if (parentId === undefined) return current.id
    const parent = lookup(parentId)
    if (!parent) return parentId
    current = parent
  }
  return current.id
}
