/**
 * A QuickJS (WebAssembly) sandbox for model-written programs. Every run gets an interpreter
 * instance with a hard heap cap (`interpreter.ts`), a fresh runtime and context with stack and time
 * limits, all disposed when the run ends. Host bindings are reached through JSON copies only.
 */
import { errors, type QuickJSContext, type QuickJSDeferredPromise, type QuickJSHandle, type QuickJSRuntime } from 'quickjs-emscripten'
import type { JsonValue } from '../../lib/types.ts'
import { acquireInterpreter, type Interpreter, releaseInterpreter } from './interpreter.ts'
import { decodeSettlement, PRELUDE, type Settlement } from './prelude.ts'

export type SandboxOutcome = { ok: true; value: JsonValue | undefined } | { ok: false; error: string }

/**
 * A host function the program reaches as `tools.<name>(args)`. `args` is a JSON copy (or
 * `undefined`); `signal` aborts when the run ends, so work the program no longer awaits stops.
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
  signal?: AbortSignal
}

export const DEFAULT_TIMEOUT_MS = 5000
export const DEFAULT_MEMORY_BYTES = 32 * 1024 * 1024
/** Smallest `memoryBytes` accepted: the prelude and a context need a few hundred KiB. */
export const MIN_MEMORY_BYTES = 1024 * 1024
/**
 * Interpreter stack. The interpreter's frames also use Node's native stack, several times over:
 * this keeps ordinary runaway recursion a clean `stack limit` error well inside Node's ~1 MB.
 */
export const STACK_BYTES = 256 * 1024

/** Every message a failed run can carry; each is pinned by a test. */
export const sandboxMessages = {
  timeout: (ms: number): string => `run_code timed out after ${ms} ms`,
  memory: 'run_code exceeded its memory limit',
  stack: 'run_code exceeded its stack limit',
  aborted: 'run_code was aborted',
  notJson: (reason: string): string => `run_code result is not JSON: ${reason}`,
  fault: (reason: string): string => `run_code sandbox failed: ${reason}`,
} as const

// jobs run between checks of the clock and the signal, so a microtask storm cannot outlive the limit
const JOB_BATCH = 256

/** An error value the interpreter produced, carried out to the host. */
class InterpreterError extends Error {
  constructor(name: string, message: string) {
    super(message)
    this.name = name
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

function failed(error: string): SandboxOutcome {
  return { ok: false, error }
}

/**
 * Maps what the program threw to the run's error string. Out of memory, QuickJS may fail to
 * allocate even the error and throw `null`: a non-error value after a refused growth means memory.
 */
function thrownError(name: string | null, message: string, isMemoryFull: boolean): string {
  if (name === 'InternalError' && message === 'out of memory') return sandboxMessages.memory
  if (name === 'InternalError' && message === 'stack overflow') return sandboxMessages.stack
  if (name === null) return isMemoryFull ? sandboxMessages.memory : `Uncaught ${message}`
  return `${name}: ${message}`
}

function outcomeOf(settlement: Settlement, isMemoryFull: boolean): SandboxOutcome {
  switch (settlement.kind) {
    case 'returned':
      return { ok: true, value: settlement.json === undefined ? undefined : (JSON.parse(settlement.json) as JsonValue) }
    case 'threw':
      return failed(thrownError(settlement.name, settlement.message, isMemoryFull))
    case 'not-json': {
      const error = thrownError(settlement.name, settlement.message, isMemoryFull)
      return failed(error === sandboxMessages.memory || error === sandboxMessages.stack ? error : sandboxMessages.notJson(settlement.message))
    }
  }
}

/** Node's own stack ran out while the interpreter was running: its state is unknown. */
function isHostStackOverflow(error: unknown): boolean {
  return error instanceof RangeError && /call stack/i.test(error.message)
}

/**
 * Runs `code` as the body of an async function with `tools.<name>(args)` bound to `bindings`.
 * Never rejects for the program's behaviour: every failure is an outcome whose `error` is one of
 * `sandboxMessages` or `<Name>: <message>` for a thrown error. Throws `RangeError` for bad limits.
 */
export async function runSandboxed(options: SandboxOptions): Promise<SandboxOutcome> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
  const memoryBytes = options.memoryBytes ?? DEFAULT_MEMORY_BYTES
  if (!(timeoutMs > 0) || !Number.isFinite(timeoutMs)) throw new RangeError('run_code timeoutMs must be a positive number')
  if (!Number.isSafeInteger(memoryBytes) || memoryBytes < MIN_MEMORY_BYTES) {
    throw new RangeError(`run_code memoryBytes must be an integer of at least ${MIN_MEMORY_BYTES}`)
  }
  if (options.signal?.aborted) return failed(sandboxMessages.aborted)
  let interpreter: Interpreter
  try {
    interpreter = await acquireInterpreter(memoryBytes)
  } catch (error) {
    return failed(sandboxMessages.fault(messageOf(error)))
  }
  if (options.signal?.aborted) {
    releaseInterpreter(interpreter)
    return failed(sandboxMessages.aborted)
  }
  return new SandboxRun(interpreter, { ...options, timeoutMs, memoryBytes }).execute()
}

type StopReason = 'timeout' | 'aborted'

class SandboxRun {
  private runtime?: QuickJSRuntime
  private context?: QuickJSContext
  private program?: QuickJSHandle
  private readonly pending = new Set<QuickJSDeferredPromise>()
  /** Aborted when the run ends; handed to every binding call. */
  private readonly controller = new AbortController()
  private readonly deadline: number
  private stopReason?: StopReason
  /** A host-side failure while settling a binding call. */
  private failure?: { error: unknown }
  private isFinished = false
  /** A host-side failure left the instance in an unknown state: it is dropped, not disposed. */
  private isCorrupted = false
  private wakeUp?: () => void
  private timer?: ReturnType<typeof setTimeout>

  constructor(
    private readonly interpreter: Interpreter,
    private readonly options: SandboxOptions & { timeoutMs: number; memoryBytes: number },
  ) {
    this.deadline = performance.now() + options.timeoutMs
  }

  async execute(): Promise<SandboxOutcome> {
    const { signal, timeoutMs } = this.options
    this.timer = setTimeout(() => this.stop('timeout'), timeoutMs)
    signal?.addEventListener('abort', this.onAbort, { once: true })
    let outcome: SandboxOutcome
    try {
      this.start()
      outcome = await this.settle()
    } catch (error) {
      outcome = this.fault(error)
    }
    return this.finish(outcome)
  }

  private readonly onAbort = (): void => this.stop('aborted')

  private stop(reason: StopReason): void {
    this.stopReason ??= reason
    this.wake()
  }

  private wake(): void {
    const wakeUp = this.wakeUp
    this.wakeUp = undefined
    wakeUp?.()
  }

  private readonly shouldInterrupt = (): boolean => {
    if (this.stopReason) return true
    if (this.options.signal?.aborted) this.stopReason = 'aborted'
    else if (performance.now() >= this.deadline) this.stopReason = 'timeout'
    return this.stopReason !== undefined
  }

  private stopped(): SandboxOutcome | undefined {
    if (!this.stopReason) this.shouldInterrupt()
    if (this.stopReason === 'aborted') return failed(sandboxMessages.aborted)
    if (this.stopReason === 'timeout') return failed(sandboxMessages.timeout(this.options.timeoutMs))
    return undefined
  }

  /** Creates the runtime and context and starts the program up to its first await. */
  private start(): void {
    const runtime = (this.runtime = this.interpreter.module.newRuntime())
    runtime.setMemoryLimit(this.options.memoryBytes)
    runtime.setMaxStackSize(STACK_BYTES)
    runtime.setInterruptHandler(this.shouldInterrupt)
    const context = (this.context = runtime.newContext())
    const handles: QuickJSHandle[] = []
    try {
      const install = context.evalCode(PRELUDE, 'prelude.js', { type: 'global', strict: true })
      if (install.error) throw this.vmError(install.error)
      handles.push(install.value)
      handles.push(this.newCall(context))
      handles.push(context.newString(JSON.stringify(Object.keys(this.options.bindings))))
      handles.push(context.newString(this.options.code))
      const started = context.callFunction(handles[0]!, context.undefined, handles.slice(1))
      if (started.error) throw this.vmError(started.error)
      this.program = started.value
    } finally {
      for (const handle of handles) handle.dispose()
    }
  }

  /** Pumps jobs until the program settles, the run stops or a binding call must be awaited. */
  private async settle(): Promise<SandboxOutcome> {
    for (;;) {
      const stopped = this.stopped()
      if (stopped) return stopped
      if (this.failure) throw this.failure.error
      const ended = this.pump() ?? this.readProgram()
      if (ended) return ended
      await new Promise<void>((resolve) => {
        this.wakeUp = resolve
      })
    }
  }

  private pump(): SandboxOutcome | undefined {
    const runtime = this.runtime!
    for (;;) {
      const result = runtime.executePendingJobs(JOB_BATCH)
      if (result.error) {
        const error = this.vmError(result.error)
        return this.stopped() ?? this.thrown(error)
      }
      if (result.value < JOB_BATCH) return undefined
      const stopped = this.stopped()
      if (stopped) return stopped
    }
  }

  private readProgram(): SandboxOutcome | undefined {
    const context = this.context!
    const state = context.getPromiseState(this.program!)
    if (state.type === 'pending') return undefined
    if (state.type === 'rejected') {
      // only errors the program cannot catch get here: interrupts, or memory gone mid-report
      const error = this.vmError(state.error)
      return this.stopped() ?? this.thrown(error)
    }
    if (state.notAPromise) return failed(sandboxMessages.fault('the prelude returned no promise'))
    const text = state.value.consume((value) => (context.typeof(value) === 'string' ? context.getString(value) : undefined))
    const settlement = decodeSettlement(text)
    return settlement ? outcomeOf(settlement, this.interpreter.hasRefusedGrowth) : failed(sandboxMessages.fault('the prelude reported nothing'))
  }

  private thrown(error: Error): SandboxOutcome {
    return failed(thrownError(error.name, error.message, this.interpreter.hasRefusedGrowth))
  }

  /** Reads (and disposes) an error handle without trusting its shape. */
  private vmError(handle: QuickJSHandle): InterpreterError {
    const context = this.context!
    try {
      const read = (key: string): string | undefined =>
        context.getProp(handle, key).consume((value) => (context.typeof(value) === 'string' ? context.getString(value) : undefined))
      if (context.typeof(handle) !== 'object') return new InterpreterError('Error', String(context.dump(handle)))
      return new InterpreterError(read('name') ?? 'Error', read('message') ?? '')
    } finally {
      handle.dispose()
    }
  }

  /** The host function behind every binding: `call(name, argsJson)` → promise of JSON text. */
  private newCall(context: QuickJSContext): QuickJSHandle {
    const { bindings } = this.options
    return context.newFunction('call', (nameHandle, argsHandle) => {
      const name = context.getString(nameHandle)
      const argsJson = context.typeof(argsHandle) === 'string' ? context.getString(argsHandle) : undefined
      const deferred = context.newPromise()
      this.pending.add(deferred)
      const binding = Object.hasOwn(bindings, name) ? bindings[name] : undefined
      // started on a later microtask: host code never runs on top of the interpreter's stack
      void Promise.resolve()
        .then(() => {
          if (!binding) throw new Error(`unknown binding "${name}"`)
          return binding(argsJson === undefined ? undefined : JSON.parse(argsJson), this.controller.signal)
        })
        .then(
          (value) => this.settleCall(deferred, { value }),
          (error: unknown) => this.settleCall(deferred, { error }),
        )
      return deferred.handle
    })
  }

  /** Settles one binding call inside the sandbox; a no-op once the run has ended. */
  private settleCall(deferred: QuickJSDeferredPromise, result: { value: unknown } | { error: unknown }): void {
    if (this.isFinished || !this.pending.delete(deferred)) return
    const context = this.context!
    const settled = 'error' in result ? result : this.encode(result.value)
    try {
      if ('json' in settled) {
        if (settled.json === undefined) deferred.resolve()
        else context.newString(settled.json).consume((value) => deferred.resolve(value))
      } else {
        const { error } = settled
        context.newError(messageOf(error)).consume((value) => {
          const code = (error as { code?: unknown } | null)?.code
          if (typeof code === 'string') context.newString(code).consume((text) => context.setProp(value, 'code', text))
          deferred.reject(value)
        })
      }
    } catch (error) {
      this.failure ??= { error }
    }
    this.wake()
  }

  /** The JSON text a binding result enters the sandbox as, or why it cannot. */
  private encode(value: unknown): { json: string | undefined } | { error: Error } {
    let json: string | undefined
    try {
      json = JSON.stringify(value)
    } catch (error) {
      return { error: new Error(`tool result is not JSON: ${messageOf(error)}`) }
    }
    // copying it in could only fail, after seconds of work
    if (json !== undefined && json.length > this.options.memoryBytes) {
      return { error: new Error(`tool result of ${json.length} characters does not fit in the memory limit`) }
    }
    return { json }
  }

  /** An exception escaped an interpreter call. */
  private fault(error: unknown): SandboxOutcome {
    // the interpreter reported an error through its API: its state is intact
    const isReported = error instanceof InterpreterError || error instanceof errors.QuickJSUnwrapError
    if (!isReported) this.isCorrupted = true
    const stopped = this.stopped()
    if (stopped) return stopped
    if (isReported) return this.thrown(error)
    if (isHostStackOverflow(error)) return failed(sandboxMessages.stack)
    return failed(sandboxMessages.fault(messageOf(error)))
  }

  private finish(outcome: SandboxOutcome): SandboxOutcome {
    this.isFinished = true
    clearTimeout(this.timer)
    this.options.signal?.removeEventListener('abort', this.onAbort)
    // a corrupted instance may abort on any call: leave it to the garbage collector untouched
    if (!this.isCorrupted) {
      try {
        for (const deferred of this.pending) deferred.dispose()
        this.program?.dispose()
        this.context?.dispose()
        this.runtime?.dispose()
        releaseInterpreter(this.interpreter)
      } catch {
        // a run stopped mid-way (e.g. a job storm at the time limit) can leave objects QuickJS
        // refuses to free; the outcome stands and the instance, not released, goes to the GC
      }
    }
    this.pending.clear()
    this.controller.abort(new Error('run_code ended'))
    return outcome
  }
}
