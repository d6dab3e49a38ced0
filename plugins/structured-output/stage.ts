/**
 * Staging and commit of one child's structured value (SPEC §3). A stage belongs to the execution
 * object whose body made it, and only that execution's final `tools/result` can commit it.
 */
import type { JsonValue, ToolExecution, ToolResult } from '../../lib/types.ts'

/** A nested stage whose own result succeeded, waiting for an enclosing execution that is still open. */
interface PendingCommit {
  /** Token of the enclosing execution whose result decides. */
  readonly parent: symbol
  readonly value: JsonValue
}

/** The final outcome of an execution of the child, kept while something may still refer to it. */
interface Finished {
  readonly isError: boolean
  readonly parent: symbol | undefined
}

/**
 * What the capture tool's body may do: `stage`, or report the call as not recorded because another
 * capture is in flight (`busy`) or an enclosing execution already failed (`failed`).
 */
export type StageDecision = 'stage' | 'busy' | 'failed'

/**
 * Per-child capture state. `observe` is the child's `tools/result` observer: a staged value commits
 * when the result of the execution that staged it succeeded and every enclosing execution (Code
 * Mode's `run_code`, `exec.parent`) succeeded too, whichever of those results comes last; a failed
 * one discards it. At most one stage is in flight at a time. The first commit wins and is final.
 */
export class CaptureState {
  // one slot, not a map: `decide` refuses a second stage while one is in flight
  #stagedBy: ToolExecution | undefined
  #stagedValue: JsonValue = null
  /**
   * Outcomes by token, so a nested call that runs after its enclosing execution reported (an
   * un-awaited binding call) still learns how that ended. Weak: an entry lives as long as the token
   * (which the nested executions hold as `parent`). Made on the first outcome that may matter later
   * and dropped at the commit, after which nothing reads it.
   */
  #finished: WeakMap<symbol, Finished> | undefined
  #pending: PendingCommit | undefined
  #isCommitted = false
  #value: JsonValue | undefined
  /** Set once the run's result went through `subagent/settle` (or rejected without it). */
  isSettled = false
  /** Set once the run was handed to the adoption registry (the plugin was unloaded). */
  isAdopted = false

  /** True once a value is committed. */
  get isCommitted(): boolean {
    return this.#isCommitted
  }

  /** True while a commit exists or a nested one is pending: the guard denies further calls. */
  get isLocked(): boolean {
    return this.#isCommitted || this.#pending !== undefined
  }

  /** The committed value (a frozen JSON copy), or `undefined`. */
  get value(): JsonValue | undefined {
    return this.#value
  }

  /**
   * Decides whether the body of `exec` may stage: not while another stage is in flight or a value
   * is committed or pending (`busy`), nor when an enclosing execution already failed (`failed`).
   */
  decide(exec: ToolExecution): StageDecision {
    if (this.#stagedBy !== undefined || this.isLocked) return 'busy'
    return this.#enclosingOutcome(exec.parent) === 'failed' ? 'failed' : 'stage'
  }

  /** Records `value` (a frozen JSON copy) for `exec`; nothing commits before its `tools/result`. */
  stage(exec: ToolExecution, value: JsonValue): void {
    this.#stagedBy = exec
    this.#stagedValue = value
  }

  /** Feeds one final outcome of the child's executions (its `tools/result`). */
  observe(exec: ToolExecution, result: ToolResult): void {
    // after the commit nothing can stage or wait, so no outcome is needed any more
    if (this.#isCommitted) return
    if (this.#stagedBy === exec) {
      const value = this.#stagedValue
      this.#stagedBy = undefined
      this.#stagedValue = null
      // a post-execute listener that turned the capture into an error discards it
      if (!result.isError && !this.isLocked) this.#resolve(value, exec.parent)
    } else {
      const pending = this.#pending
      if (pending !== undefined && exec.token === pending.parent) {
        this.#pending = undefined
        if (!result.isError) this.#resolve(pending.value, exec.parent)
      }
    }
    // the outcome is recorded after the resolution above, which only reads enclosing executions
    if (!this.#isCommitted) (this.#finished ??= new WeakMap()).set(exec.token, { isError: result.isError, parent: exec.parent })
  }

  /** Commits `value`, or leaves it pending on the innermost enclosing execution still open. */
  #resolve(value: JsonValue, parent: symbol | undefined): void {
    const outcome = this.#enclosingOutcome(parent)
    if (outcome === 'failed') return
    if (outcome === 'succeeded') {
      this.#isCommitted = true
      this.#value = value
      this.#finished = undefined
    } else {
      this.#pending = { parent: outcome.open, value }
    }
  }

  /** How the executions enclosing a call with `parent` ended, walking outwards. */
  #enclosingOutcome(parent: symbol | undefined): 'succeeded' | 'failed' | { open: symbol } {
    for (let token = parent; token !== undefined; ) {
      const finished = this.#finished?.get(token)
      if (finished === undefined) return { open: token }
      if (finished.isError) return 'failed'
      token = finished.parent
    }
    return 'succeeded'
  }
}
