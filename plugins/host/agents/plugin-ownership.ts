/**
 * Agents created through a plugin's context go with that plugin: one cordis effect per plugin
 * fiber (made with its first agent) disposes them all when the plugin unloads, so creating an
 * agent spends no effect of its own.
 */
import type { Context } from 'cordis'
import type { AgentRecord } from './agent-record.ts'

export class PluginOwnership {
  readonly #owned = new WeakMap<Context['fiber'], Set<AgentRecord>>()

  /**
   * Ties `record` to the fiber of `ctx`; sets `record.release` to untie it. Throws cordis's
   * inactive-context error for a disposed fiber, with nothing tied.
   */
  bind(ctx: Context, record: AgentRecord): void {
    const owned = this.#ownedBy(ctx)
    owned.add(record)
    record.release = releaser(owned, record)
  }

  #ownedBy(ctx: Context): Set<AgentRecord> {
    const fiber = ctx.fiber
    fiber.assertActive()
    const existing = this.#owned.get(fiber)
    if (existing) return existing
    const agents = new Set<AgentRecord>()
    ctx.effect(() => {
      this.#owned.set(fiber, agents)
      return async () => {
        this.#owned.delete(fiber)
        await Promise.allSettled([...agents].map((record) => record.dispose()))
      }
    }, 'ctx.agents.create()')
    return agents
  }
}

/**
 * Unties `record` from `owned`. Made here, not as `record.release = () => …` in `bind`: V8
 * allocates a function literal assigned to a property in the old generation (from unoptimized
 * code), where, dead after the disposal, it would hold the record and its agent through every
 * scavenge until the next full GC.
 */
function releaser(owned: Set<AgentRecord>, record: AgentRecord): () => void {
  return () => void owned.delete(record)
}
