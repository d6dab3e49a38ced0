/**
 * Sandbox workers: threads that each run one program at a time, so that no program can stall the
 * host's event loop. A finished run hands its worker back for the next run (starting one costs far
 * more than a run); a worker stopped mid-run is terminated and never reused.
 */
import { Worker } from 'node:worker_threads'
import { compileInterpreter } from './interpreter-code.ts'
import { DisposedError } from '../../lib/errors.ts'

// the worker is the same kind of module as this one: `.ts` under tsx, `.js` in dist/
const workerUrl = new URL(import.meta.url.endsWith('.ts') ? './sandbox-worker-tsx.mjs' : './sandbox-worker.js', import.meta.url)

let liveWorkers = 0

/** How many sandbox workers exist in this process, across every pool (for leak checks). */
export function liveSandboxWorkers(): number {
  return liveWorkers
}

/**
 * A set of sandbox workers. `acquire` lends a worker for one run; `release` takes back one whose
 * run finished cleanly, `discard` terminates one whose run was stopped. Idle workers do not keep
 * the process alive.
 */
export class SandboxPool {
  readonly #idle: Worker[] = []
  readonly #exits = new Set<Promise<void>>()
  readonly #spawning = new Set<Promise<unknown>>()
  #isDisposed = false

  /** `maxIdle` workers at most wait for the next run; the rest are terminated when they finish. */
  constructor(readonly maxIdle = 1) {}

  /** Starts a worker ahead of the first run, so that run does not pay for the start. */
  prewarm(): void {
    if (this.#isDisposed || this.#idle.length > 0) return
    void this.#spawn().then(
      (worker) => this.release(worker),
      () => undefined,
    )
  }

  /**
   * A worker for one run: an idle one, or a new one. Rejects once the pool is disposed, or when
   * the interpreter cannot be compiled.
   */
  async acquire(): Promise<Worker> {
    const worker = this.#idle.pop() ?? (await this.#spawn())
    if (this.#isDisposed) {
      this.discard(worker)
      throw new DisposedError('the sandbox pool')
    }
    worker.ref()
    return worker
  }

  /** Takes back a worker whose run finished: kept idle, or terminated when not needed. */
  release(worker: Worker): void {
    if (this.#isDisposed || this.#idle.length >= this.maxIdle) {
      this.discard(worker)
      return
    }
    worker.unref()
    this.#idle.push(worker)
  }

  /** Terminates a worker (a stopped run, or one not needed any more). */
  discard(worker: Worker): void {
    const index = this.#idle.indexOf(worker)
    if (index >= 0) this.#idle.splice(index, 1)
    const exit = worker.terminate().then(
      () => undefined,
      () => undefined,
    )
    this.#exits.add(exit)
    void exit.then(() => this.#exits.delete(exit))
  }

  /**
   * Terminates the idle workers and resolves when they are gone. A worker lent out is terminated
   * when its run ends instead of coming back.
   */
  async dispose(): Promise<void> {
    this.#isDisposed = true
    // a worker still being spawned is discarded by whoever waits for it (prewarm or acquire)
    await Promise.allSettled(this.#spawning)
    for (const worker of [...this.#idle]) this.discard(worker)
    await Promise.all(this.#exits)
  }

  #spawn(): Promise<Worker> {
    const spawning = this.#start()
    this.#spawning.add(spawning)
    void spawning.then(
      () => this.#spawning.delete(spawning),
      () => this.#spawning.delete(spawning),
    )
    return spawning
  }

  async #start(): Promise<Worker> {
    if (this.#isDisposed) throw new DisposedError('the sandbox pool')
    // compiled once per process; a worker that compiled its own would spend ~100 ms on it
    const wasmModule = await compileInterpreter()
    // no inherited flags: `--input-type` or a loader's `--import` break or slow a file worker, and
    // under tsx the entry registers its own loader
    const worker = new Worker(workerUrl, { workerData: { wasmModule }, execArgv: [] })
    liveWorkers++
    // an idle worker that dies (it should not) leaves the pool; a lent one is reported by its run
    worker.on('error', () => undefined)
    worker.once('exit', () => {
      liveWorkers--
      const index = this.#idle.indexOf(worker)
      if (index >= 0) this.#idle.splice(index, 1)
    })
    return worker
  }
}
