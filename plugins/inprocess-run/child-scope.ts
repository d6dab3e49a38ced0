/**
 * What a child's setup window registered from its start request — persona, inherited tool
 * ceiling, tool filter — written into its own session, so a whole-tree resume (SPEC §14) gives
 * the resumed child the same scope: a model never reaches through a resumed child a tool it was
 * denied. Written only while a session store is loaded (nothing could read it back otherwise).
 */
import type { Agent, SessionEvent } from '../../lib/types.ts'

/** The session event: `{persona?, inherited?, toolFilter?: {allow?, deny?}}`. */
export const SCOPE_EVENT = 'subagent/scope'

export interface ScopeRecord {
  persona?: string
  /** The global tools the child may see at most (its parent's, at start). */
  inherited?: string[]
  toolFilter?: { allow?: string[]; deny?: string[] }
  /** An agent definition's tool filter (SPEC §12), its prefixes expanded at start. */
  definitionFilter?: { allow?: string[]; deny?: string[] }
}

/** Appends the record to the unpublished child's session when there is anything to record. */
export function recordScope(child: Agent, record: ScopeRecord): void {
  if (record.persona === undefined && record.inherited === undefined && record.toolFilter === undefined && record.definitionFilter === undefined) return
  child.session.append(SCOPE_EVENT, record)
}

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string')
}

function readFilter(value: unknown): { allow?: string[]; deny?: string[] } | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  const filter = value as Record<string, unknown>
  const read: { allow?: string[]; deny?: string[] } = {}
  if (isStringList(filter.allow)) read.allow = filter.allow
  if (isStringList(filter.deny)) read.deny = filter.deny
  return read
}

/** The child's own last well-formed record (after its seed: a fork's seed holds its parent's). */
function lastRecord(events: readonly SessionEvent[], seedLength: number): ScopeRecord | undefined {
  for (let i = events.length - 1; i >= seedLength; i--) {
    const event = events[i]!
    if (event.type !== SCOPE_EVENT || typeof event.data !== 'object' || event.data === null) continue
    const data = event.data as Record<string, unknown>
    const record: ScopeRecord = {}
    if (typeof data.persona === 'string') record.persona = data.persona
    if (isStringList(data.inherited)) record.inherited = data.inherited
    const filter = readFilter(data.toolFilter)
    if (filter) record.toolFilter = filter
    const definitionFilter = readFilter(data.definitionFilter)
    if (definitionFilter) record.definitionFilter = definitionFilter
    return record
  }
  return undefined
}

/**
 * Registers again, through the resumed child's context (in its unpublished window), the scope its
 * session recorded. A tool no longer registered is left out of the lists: hidden from an allow
 * list anyway, and nothing to deny.
 */
export function restoreScope(child: Agent): void {
  const record = lastRecord(child.session.events, child.session.header.seedLength ?? 0)
  if (!record) return
  if (record.persona !== undefined) child.ctx.systemPrompt.section({ name: 'persona', order: 0, text: record.persona })
  const tools = child.ctx.tools
  const known = (names: readonly string[]) => names.filter((name) => tools.get(name) !== undefined)
  if (record.inherited) tools.restrict({ allow: known(record.inherited) })
  // a definition's filter and the request's compose, as at start
  for (const filter of [record.definitionFilter, record.toolFilter]) {
    if (filter && (filter.allow || filter.deny)) {
      tools.restrict({ ...(filter.allow ? { allow: known(filter.allow) } : {}), ...(filter.deny ? { deny: known(filter.deny) } : {}) })
    }
  }
}
