/**
 * Staging and commit of one child's structured value (SPEC §3). A stage belongs to the execution
 * object whose body made it, and only that execution's final `tools/result` can commit it.
 */
import type { JsonValue, ToolExecution, ToolResult } from '../../lib/types.ts'

/** A nested stage whose own result succeeded, waiting for the execution that encloses it. */
interface PendingCommit {
  /** Token of the enclosing execution whose result decides. */
  readonly parent: symbol
  readonly value: JsonValue
}

/**
 * Per-child capture state. `observe` is the child's `tools/result` observer: a staged value commits
 * when the result of the execution that staged it succeeded; nested in Code Mode (`exec.parent`
 * set) it stays pending until the enclosing execution's result, and commits only if that succeeded.
 * The first commit wins and is final.
 */
export class CaptureState {
  /** Keyed by the execution object itself: a reused call id or token never matches another's stage. */
  readonly #staged = new Map<ToolExecution, JsonValue>()
  #pending: PendingCommit | undefined
  #committed: { readonly value: JsonValue } | undefined
  /** Set once the run's result went through `subagent/settle`. */
  isSettled = false
  /** Set once the child's own context settles its run (the plugin was unloaded). */
  isAdopted = false

  /** True once a value is committed. */
  get isCommitted(): boolean {
    return this.#committed !== undefined
  }

  /** True while a commit exists or a nested one is pending: the guard denies further calls. */
  get isLocked(): boolean {
    return this.#committed !== undefined || this.#pending !== undefined
  }

  /** The committed value (a frozen JSON copy), or `undefined`. */
  get value(): JsonValue | undefined {
    return this.#committed?.value
  }

  /** Records `value` (a frozen JSON copy) for `exec`; nothing commits before its `tools/result`. */
  stage(exec: ToolExecution, value: JsonValue): void {
    this.#staged.set(exec, value)
  }

  /** Feeds one final outcome of the child's executions (its `tools/result`). */
  observe(exec: ToolExecution, result: ToolResult): void {
    if (this.#staged.has(exec)) {
      const value = this.#staged.get(exec)!
      this.#staged.delete(exec)
      // a post-execute listener that turned the capture into an error discards it
      if (result.isError || this.isLocked) return
      if (exec.parent === undefined) this.#committed = { value }
      else this.#pending = { parent: exec.parent, value }
      return
    }
    const pending = this.#pending
    if (pending === undefined || exec.token !== pending.parent) return
    this.#pending = undefined
    if (result.isError) return
    // an enclosing execution that is itself nested hands the decision one level up
    if (exec.parent === undefined) this.#committed = { value: pending.value }
    else this.#pending = { parent: exec.parent, value: pending.value }
  }
}
