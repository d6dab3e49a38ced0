/**
 * One program in a QuickJS (WebAssembly) interpreter, on the thread that calls it (the sandbox
 * worker). Every run gets an interpreter instance with a hard heap cap (`interpreter.ts`), a fresh
 * runtime and context with stack and time limits, all disposed when the run ends. Bindings are
 * reached through JSON text only.
 */
import { errors, type QuickJSContext, type QuickJSDeferredPromise, type QuickJSHandle, type QuickJSRuntime } from 'quickjs-emscripten'
import type { JsonValue } from '../../lib/types.ts'
import { acquireInterpreter, type Interpreter, releaseInterpreter } from './interpreter.ts'
import { decodeSettlement, PRELUDE, type Settlement } from './prelude.ts'
import { STACK_BYTES, sandboxMessages } from './sandbox-contract.ts'
import type { EncodedResult, SandboxOutcome } from './worker-protocol.ts'
import { thrownMessage } from '../../lib/errors.ts'

export interface ThreadRunOptions {
  /** The body of an async function. */
  code: string
  /** The names the program reaches as `tools.<name>`. */
  names: readonly string[]
  /** Performs one binding call; never rejects for the tool's behaviour. */
  call(name: string, argsJson: string | undefined): Promise<EncodedResult>
  /** Wall-clock limit, counted from when the program starts (its interpreter is ready). */
  timeoutMs: number
  /** Called as the program starts, with the `Date.now()` time at which its time is up. */
  onStart(deadline: number): void
  memoryBytes: number
}

// jobs run between checks of the clock, so a microtask storm cannot outlive the limit
const JOB_BATCH = 256

/** An error value the interpreter produced, carried out to the host. */
class InterpreterError extends Error {
  constructor(name: string, message: string) {
    super(message)
    this.name = name
  }
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

/** The thread's own stack ran out while the interpreter was running: its state is unknown. */
function isHostStackOverflow(error: unknown): boolean {
  return error instanceof RangeError && /call stack/i.test(error.message)
}

/**
 * Runs `code` as the body of an async function with `tools.<name>(args)` bound to `call`. The run
 * ends when the program has settled and every binding call it made has been settled inside it, or
 * at the deadline. Never rejects: every failure is an outcome whose `error` is one of
 * `sandboxMessages` or `<Name>: <message>` for a thrown error.
 */
export async function runInThread(options: ThreadRunOptions): Promise<SandboxOutcome> {
  let interpreter: Interpreter
  try {
    interpreter = await acquireInterpreter(options.memoryBytes)
  } catch (error) {
    return failed(sandboxMessages.fault(thrownMessage(error)))
  }
  return new SandboxRun(interpreter, options).execute()
}

class SandboxRun {
  private runtime?: QuickJSRuntime
  private context?: QuickJSContext
  private program?: QuickJSHandle
  /** The program's own outcome, kept while binding calls it left running are still settling. */
  private programOutcome?: SandboxOutcome
  private readonly pending = new Set<QuickJSDeferredPromise>()
  private isTimedOut = false
  /** A host-side failure while settling a binding call. */
  private failure?: { error: unknown }
  private isFinished = false
  /** A host-side failure left the instance in an unknown state: it is dropped, not disposed. */
  private isCorrupted = false
  private wakeUp?: () => void
  private timer?: ReturnType<typeof setTimeout>
  private readonly deadline: number

  constructor(
    private readonly interpreter: Interpreter,
    private readonly options: ThreadRunOptions,
  ) {
    this.deadline = Date.now() + options.timeoutMs
  }

  async execute(): Promise<SandboxOutcome> {
    this.options.onStart(this.deadline)
    this.timer = setTimeout(() => {
      this.isTimedOut = true
      this.wake()
    }, this.options.timeoutMs)
    let outcome: SandboxOutcome
    try {
      this.start()
      outcome = await this.settle()
    } catch (error) {
      outcome = this.fault(error)
    }
    return this.finish(outcome)
  }

  private wake(): void {
    const wakeUp = this.wakeUp
    this.wakeUp = undefined
    wakeUp?.()
  }

  private readonly shouldInterrupt = (): boolean => {
    if (!this.isTimedOut && Date.now() >= this.deadline) this.isTimedOut = true
    return this.isTimedOut
  }

  private stopped(): SandboxOutcome | undefined {
    return this.shouldInterrupt() ? failed(sandboxMessages.timeout(this.options.timeoutMs)) : undefined
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
      handles.push(context.newString(JSON.stringify(this.options.names)))
      // as JSON text: a string enters QuickJS as a C string, which would end at a NUL character
      handles.push(context.newString(JSON.stringify(this.options.code)))
      const started = context.callFunction(handles[0]!, context.undefined, handles.slice(1))
      if (started.error) throw this.vmError(started.error)
      this.program = started.value
    } finally {
      for (const handle of handles) handle.dispose()
    }
  }

  /**
   * Pumps jobs until the program has settled and no binding call is pending, the time is up, or
   * a binding call must be awaited.
   */
  private async settle(): Promise<SandboxOutcome> {
    for (;;) {
      const stopped = this.stopped()
      if (stopped) return stopped
      if (this.failure) throw this.failure.error
      const pumped = this.pump()
      if (pumped) return pumped
      this.programOutcome ??= this.readProgram()
      // a call the program did not await still ends before the run does, and may start others
      if (this.programOutcome && this.pending.size === 0) return this.programOutcome
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
    // an interrupt that reached an awaiting async function is reported by the prelude as a throw
    const stopped = this.stopped()
    if (stopped) {
      state.value.dispose()
      return stopped
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
    return context.newFunction('call', (nameHandle, argsHandle) => {
      const name = context.getString(nameHandle)
      const argsJson = context.typeof(argsHandle) === 'string' ? context.getString(argsHandle) : undefined
      const deferred = context.newPromise()
      this.pending.add(deferred)
      // started on a later microtask: host code never runs on top of the interpreter's stack
      void Promise.resolve()
        .then(() => this.options.call(name, argsJson))
        .then(
          (result) => this.settleCall(deferred, result),
          (error: unknown) => this.settleCall(deferred, { error: { message: thrownMessage(error) } }),
        )
      return deferred.handle
    })
  }

  /** Settles one binding call inside the sandbox; a no-op once the run has ended. */
  private settleCall(deferred: QuickJSDeferredPromise, result: EncodedResult): void {
    if (this.isFinished || !this.pending.delete(deferred)) return
    const context = this.context!
    try {
      if ('json' in result) {
        if (result.json === undefined) deferred.resolve()
        else context.newString(result.json).consume((value) => deferred.resolve(value))
      } else {
        const { message, code } = result.error
        context.newError(message).consume((value) => {
          if (code !== undefined) context.newString(code).consume((text) => context.setProp(value, 'code', text))
          deferred.reject(value)
        })
      }
    } catch (error) {
      this.failure ??= { error }
    }
    this.wake()
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
    return failed(sandboxMessages.fault(thrownMessage(error)))
  }

  private finish(outcome: SandboxOutcome): SandboxOutcome {
    this.isFinished = true
    clearTimeout(this.timer)
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
    return outcome
  }
}
