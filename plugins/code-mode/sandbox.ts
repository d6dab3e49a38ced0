/**
 * The sandbox as the host thread sees it: a model-written program runs in a QuickJS interpreter on
 * a worker thread (`worker-pool.ts`, `sandbox-run.ts`), so the host's event loop keeps ticking
 * whatever the program does. The host enforces the time limit and the abort by terminating the
 * worker; binding calls cross the thread boundary as messages carrying JSON text.
 */
import { setMaxListeners } from 'node:events'
import type { Worker } from 'node:worker_threads'
import { isTimerDelay, MAX_TIMER_DELAY_MS } from '../../lib/async/timer-delay.ts'
import {
  DEFAULT_MEMORY_BYTES,
  DEFAULT_TIMEOUT_MS,
  DEFAULT_WAITING_ARGUMENT_BYTES,
  MAX_CALLS_IN_FLIGHT,
  MAX_MEMORY_BYTES,
  MIN_MEMORY_BYTES,
  sandboxMessages,
  waitingArgumentsMessage,
} from './sandbox-contract.ts'
import { SandboxPool } from './worker-pool.ts'
import type { BindingCall, EncodedResult, HostMessage, SandboxOutcome, WorkerMessage } from './worker-protocol.ts'
import { SubagentError, thrownMessage } from '../../lib/errors.ts'
import { programCode } from './errors.ts'

export type { SandboxOutcome } from './worker-protocol.ts'

/**
 * A host function the program reaches as `tools.<name>(args)`. `args` is a JSON copy (or
 * `undefined`); `signal` aborts when the run is stopped (time limit, abort, failure) while the
 * call is still in flight, so work nobody will read stops.
 */
export type SandboxBinding = (args: unknown, signal: AbortSignal) => Promise<unknown>

export interface SandboxOptions {
  /** The body of an async function. */
  code: string
  bindings: Readonly<Record<string, SandboxBinding>>
  /** Wall-clock limit for the whole program, awaited bindings included. Default 5000. */
  timeoutMs?: number
  /** Heap the program may use, on top of the interpreter's fixed base. Default 32 MiB. */
  memoryBytes?: number
  /**
   * Argument text (UTF-8 bytes) the calls waiting for a place may hold together; a call that would
   * pass it is refused in the program (`waitingArgumentsMessage`). Default 32 MiB.
   */
  maxWaitingArgumentBytes?: number
  signal?: AbortSignal
  /** The workers to run on; a process-wide pool when absent. */
  pool?: SandboxPool
}

/**
 * How long past the deadline the worker may take to report its own timeout before the host
 * terminates it: the worker usually stops the program itself and stays reusable.
 */
const TIMEOUT_GRACE_MS = 50
/** How long a worker may take to start a program (loading its modules, making an interpreter). */
const WORKER_START_MS = 30_000

let sharedPool: SandboxPool | undefined
let runCounter = 0

/**
 * Runs `code` as the body of an async function with `tools.<name>(args)` bound to `bindings`.
 * Resolves only after every binding call the program started has settled (or, when the run was
 * stopped, was aborted and then settled). Never rejects for the program's behaviour: every failure
 * is an outcome whose `error` is one of `sandboxMessages` or `<Name>: <message>` for a thrown
 * error. Throws `RangeError` for bad limits.
 */
export async function runSandboxed(options: SandboxOptions): Promise<SandboxOutcome> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
  const memoryBytes = options.memoryBytes ?? DEFAULT_MEMORY_BYTES
  const maxWaitingArgumentBytes = options.maxWaitingArgumentBytes ?? DEFAULT_WAITING_ARGUMENT_BYTES
  if (!isTimerDelay(timeoutMs)) {
    throw new RangeError(`run_code timeoutMs must be a positive number of at most ${MAX_TIMER_DELAY_MS}`)
  }
  if (!Number.isSafeInteger(memoryBytes) || memoryBytes < MIN_MEMORY_BYTES || memoryBytes > MAX_MEMORY_BYTES) {
    throw new RangeError(`run_code memoryBytes must be an integer from ${MIN_MEMORY_BYTES} to ${MAX_MEMORY_BYTES}`)
  }
  if (!Number.isSafeInteger(maxWaitingArgumentBytes) || maxWaitingArgumentBytes < 0) {
    throw new RangeError('run_code maxWaitingArgumentBytes must be a non-negative safe integer')
  }
  if (typeof options.code !== 'string') throw new TypeError('run_code code must be a string')
  if (options.signal?.aborted) return { ok: false, error: sandboxMessages.aborted }
  const pool = options.pool ?? (sharedPool ??= new SandboxPool())
  return new HostedRun(pool, { ...options, timeoutMs, memoryBytes, maxWaitingArgumentBytes }).execute()
}

/** A call waiting for a place, with the UTF-8 bytes of its argument text. */
interface WaitingCall {
  call: BindingCall
  bytes: number
}

/** One run on a worker, seen from the host thread. */
class HostedRun {
  private readonly run = ++runCounter
  private worker!: Worker
  /** Binding calls in flight, by the worker's call number. */
  private readonly pending = new Map<number, Promise<void>>()
  /** Calls waiting for one of the `MAX_CALLS_IN_FLIGHT` places, in arrival order (`waitingHead` next). */
  private waiting: WaitingCall[] = []
  private waitingHead = 0
  /** The UTF-8 bytes of the waiting calls' argument texts, together. */
  private waitingBytes = 0
  /** Aborted when the run is stopped; handed to every binding call. */
  private readonly controller = new AbortController()
  private timer?: ReturnType<typeof setTimeout>
  private isFinished = false
  private resolve!: (outcome: SandboxOutcome) => void
  private readonly ended = new Promise<SandboxOutcome>((resolve) => {
    this.resolve = resolve
  })

  constructor(
    private readonly pool: SandboxPool,
    private readonly options: SandboxOptions & { timeoutMs: number; memoryBytes: number; maxWaitingArgumentBytes: number },
  ) {
    // every call in flight may listen to the run's signal once: by design, not a leak, so Node's
    // default of 10 would warn about a program's ordinary `Promise.all` of tool calls
    setMaxListeners(MAX_CALLS_IN_FLIGHT, this.controller.signal)
  }

  async execute(): Promise<SandboxOutcome> {
    const { options } = this
    try {
      this.worker = await this.pool.acquire()
    } catch (error) {
      return { ok: false, error: sandboxMessages.fault(thrownMessage(error)) }
    }
    if (options.signal?.aborted) {
      this.pool.release(this.worker)
      return { ok: false, error: sandboxMessages.aborted }
    }
    this.worker.on('message', this.onMessage)
    this.worker.on('error', this.onError)
    this.worker.on('exit', this.onExit)
    options.signal?.addEventListener('abort', this.onAbort, { once: true })
    // the program's own time starts on the worker (`started`); a start that never comes is bounded
    this.timer = setTimeout(() => this.stop(sandboxMessages.fault('the sandbox worker did not start')), WORKER_START_MS)
    this.post({
      type: 'run',
      run: this.run,
      code: options.code,
      names: Object.keys(options.bindings),
      timeoutMs: options.timeoutMs,
      memoryBytes: options.memoryBytes,
    })
    return this.ended
  }

  private post(message: HostMessage): void {
    this.worker.postMessage(message)
  }

  private readonly onMessage = (message: WorkerMessage): void => {
    if (this.isFinished || message.run !== this.run) return
    if (message.type === 'calls') for (const call of message.calls) this.admitCall(call)
    else if (message.type === 'started') this.startClock(message.deadline)
    else void this.finish(message.outcome, true)
  }

  private startClock(deadline: number): void {
    clearTimeout(this.timer)
    const timeout = sandboxMessages.timeout(this.options.timeoutMs)
    const delay = Math.max(0, deadline - Date.now()) + TIMEOUT_GRACE_MS
    this.timer = setTimeout(() => this.stop(timeout), Math.min(delay, MAX_TIMER_DELAY_MS))
  }

  private readonly onAbort = (): void => this.stop(sandboxMessages.aborted)

  private readonly onError = (error: unknown): void => this.stop(sandboxMessages.fault(thrownMessage(error)))

  private readonly onExit = (): void => this.stop(sandboxMessages.fault('the sandbox worker exited'))

  /** Ends the run without the worker's word: whatever the program is doing, its thread goes. */
  private stop(error: string): void {
    void this.finish({ ok: false, error }, false)
  }

  /**
   * Starts the call now, or once a place is free (see `MAX_CALLS_IN_FLIGHT`); refuses it in the
   * program when its arguments would bring the waiting ones past `maxWaitingArgumentBytes`.
   */
  private admitCall(call: BindingCall): void {
    if (this.pending.size < MAX_CALLS_IN_FLIGHT) {
      this.startCall(call.call, call.name, call.args)
      return
    }
    const bytes = call.args === undefined ? 0 : Buffer.byteLength(call.args)
    const total = this.waitingBytes + bytes
    const max = this.options.maxWaitingArgumentBytes
    if (total > max) {
      this.post({ type: 'settle', run: this.run, call: call.call, result: { error: { message: waitingArgumentsMessage(total, max) } } })
      return
    }
    this.waitingBytes = total
    this.waiting.push({ call, bytes })
  }

  /** A call settled: the first waiting one takes its place. A finished run starts none. */
  private startWaiting(): void {
    if (this.isFinished || this.waitingHead === this.waiting.length) return
    const { call, bytes } = this.waiting[this.waitingHead++]!
    this.waitingBytes -= bytes
    if (this.waitingHead === this.waiting.length) {
      this.waiting = []
      this.waitingHead = 0
    }
    this.startCall(call.call, call.name, call.args)
  }

  private startCall(call: number, name: string, argsJson: string | undefined): void {
    const binding = Object.hasOwn(this.options.bindings, name) ? this.options.bindings[name] : undefined
    // the call is pending before the binding runs: a binding that stops the run is waited for too
    const settled = Promise.resolve()
      .then(async (): Promise<EncodedResult> => {
        if (!binding) throw new SubagentError('UNKNOWN_TOOL', `unknown binding "${name}"`)
        return this.encode(await binding(argsJson === undefined ? undefined : JSON.parse(argsJson), this.controller.signal))
      })
      .then(
        (result) => result,
        (error: unknown): EncodedResult => {
          const code = programCode(error)
          return { error: code === undefined ? { message: thrownMessage(error) } : { message: thrownMessage(error), code } }
        },
      )
    this.pending.set(
      call,
      settled.then((result) => {
        this.pending.delete(call)
        if (!this.isFinished) this.post({ type: 'settle', run: this.run, call, result })
        this.startWaiting()
      }),
    )
  }

  /** The JSON text a binding result enters the sandbox as, or why it cannot. */
  private encode(value: unknown): EncodedResult {
    let json: string | undefined
    try {
      json = JSON.stringify(value)
    } catch (error) {
      return { error: { message: `tool result is not JSON: ${thrownMessage(error)}` } }
    }
    // copying it in could only fail, after seconds of work
    if (json !== undefined && json.length > this.options.memoryBytes) {
      return { error: { message: `tool result of ${json.length} characters does not fit in the memory limit` } }
    }
    return { json }
  }

  /**
   * Settles the run once: the worker goes back to the pool (a clean end) or is terminated (a
   * stop), calls still in flight are aborted, and the outcome is reported after they settled.
   */
  private async finish(outcome: SandboxOutcome, isClean: boolean): Promise<void> {
    if (this.isFinished) return
    this.isFinished = true
    clearTimeout(this.timer)
    this.options.signal?.removeEventListener('abort', this.onAbort)
    this.worker.off('message', this.onMessage)
    this.worker.off('error', this.onError)
    this.worker.off('exit', this.onExit)
    if (isClean) this.pool.release(this.worker)
    else this.pool.discard(this.worker)
    // calls still waiting for a place never start: nobody will read their results
    this.waiting = []
    this.waitingHead = 0
    this.waitingBytes = 0
    this.controller.abort(new SubagentError('ABORTED', 'run_code ended'))
    await Promise.all(this.pending.values())
    this.resolve(outcome)
  }
}
