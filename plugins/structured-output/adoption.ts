/**
 * Runs that outlive the `StructuredOutput` instance that started them (SPEC §2.5: unload, a config
 * update, a restart as a dependent of `InProcessRun`). One registry per cordis root holds them all
 * and answers for them through one `subagent/settle` and one `subagent/end` listener on the root,
 * which exist only while the registry holds a run: a settle costs one map lookup, and the number
 * of listeners never grows with the number of live runs.
 */
import type { Context } from 'cordis'
import type { Agent, SubagentInfo } from '../../lib/types.ts'
import { settleCapture } from './settle.ts'
import type { CaptureState } from './stage.ts'

interface Adopted {
  readonly child: Agent
  readonly state: CaptureState
}

class Adoptions {
  /** Keyed by child id, which `subagent/end` carries. */
  readonly #runs = new Map<string, Adopted>()
  #stop: (() => void) | undefined

  constructor(private readonly root: Context) {}

  adopt(child: Agent, state: CaptureState): void {
    if (state.isSettled || state.isAdopted) return
    state.isAdopted = true
    this.#runs.set(child.id, { child, state })
    this.#stop ??= this.#listen()
  }

  #listen(): () => void {
    const root = this.root
    const offSettle = root.on('subagent/settle', (_result, run, next) => {
      const adopted = this.#runs.get(run.agent.id)
      return adopted?.child === run.agent ? settleCapture(adopted.state, run, next) : next()
    })
    // every run's result ends with exactly one `subagent/end`, settled or rejected
    const offEnd = root.on('subagent/end', (info: SubagentInfo) => this.#release(info.childId))
    return () => {
      offSettle()
      offEnd()
    }
  }

  #release(childId: string): void {
    const adopted = this.#runs.get(childId)
    if (adopted === undefined) return
    adopted.state.isSettled = true
    this.#runs.delete(childId)
    if (this.#runs.size > 0) return
    this.#stop?.()
    this.#stop = undefined
  }
}

const registries = new WeakMap<Context, Adoptions>()

/**
 * Hands a live child's capture to the registry of its cordis root, which settles its run from now
 * on. Does nothing for a run that already settled or was handed over before.
 */
export function adoptRun(root: Context, child: Agent, state: CaptureState): void {
  let adoptions = registries.get(root)
  if (adoptions === undefined) registries.set(root, (adoptions = new Adoptions(root)))
  adoptions.adopt(child, state)
}
