/**
 * A tool whose calls each wait at a gate the test opens: concurrency is observed by counting calls
 * in flight and by the order bodies start and finish, never by timing.
 */
import type { ToolDefinition, ToolExecution } from '../../lib/types.ts'

export interface GatedTool {
  readonly definition: ToolDefinition
  /** Call ids in the order their bodies started. */
  readonly started: string[]
  /** Call ids in the order their bodies returned or threw. */
  readonly finished: string[]
  /** The signal each call's body received, by call id. */
  readonly signals: Map<string, AbortSignal>
  /** Bodies running now. */
  readonly inFlight: number
  /** The most bodies ever running at once. */
  readonly maxInFlight: number
  /** Resolves once `count` bodies have started in all. */
  whenStarted(count: number): Promise<void>
  /** Lets the call's body return `<callId> done`. */
  release(callId: string): void
  /** Makes the call's body throw `error`. */
  fail(callId: string, error: Error): void
}

export interface GatedToolOptions {
  name?: string
  concurrent?: boolean
  /** A body that ignores its signal waits for its gate even after the turn is aborted. */
  ignoresSignal?: (callId: string) => boolean
}

interface Gate {
  promise: Promise<void>
  open(): void
  fail(error: Error): void
}

function makeGate(): Gate {
  let open!: () => void
  let fail!: (error: Error) => void
  const promise = new Promise<void>((resolve, reject) => {
    open = resolve
    fail = reject
  })
  promise.catch(() => {})
  return { promise, open, fail }
}

function aborted(signal: AbortSignal): Promise<never> {
  return new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason)
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true })
  })
}

export function gatedTool(options: GatedToolOptions = {}): GatedTool {
  const gates = new Map<string, Gate>()
  const gateOf = (callId: string): Gate => {
    let gate = gates.get(callId)
    if (!gate) gates.set(callId, (gate = makeGate()))
    return gate
  }
  const started: string[] = []
  const finished: string[] = []
  const signals = new Map<string, AbortSignal>()
  const waiters: { count: number; resolve: () => void }[] = []
  let inFlight = 0
  let maxInFlight = 0
  const name = options.name ?? 'gated'
  const definition: ToolDefinition = {
    name,
    description: `The ${name} tool.`,
    parameters: { type: 'object' },
    ...(options.concurrent === undefined ? {} : { concurrent: options.concurrent }),
    async execute(_args: never, exec: ToolExecution) {
      started.push(exec.callId)
      signals.set(exec.callId, exec.signal)
      inFlight++
      maxInFlight = Math.max(maxInFlight, inFlight)
      for (const waiter of waiters.filter((w) => started.length >= w.count)) {
        waiters.splice(waiters.indexOf(waiter), 1)
        waiter.resolve()
      }
      try {
        const gate = gateOf(exec.callId).promise
        await (options.ignoresSignal?.(exec.callId) ? gate : Promise.race([gate, aborted(exec.signal)]))
        return `${exec.callId} done`
      } finally {
        inFlight--
        finished.push(exec.callId)
      }
    },
  }
  return {
    definition,
    started,
    finished,
    signals,
    get inFlight() {
      return inFlight
    },
    get maxInFlight() {
      return maxInFlight
    },
    whenStarted(count) {
      if (started.length >= count) return Promise.resolve()
      return new Promise<void>((resolve) => waiters.push({ count, resolve }))
    },
    release: (callId) => gateOf(callId).open(),
    fail: (callId, error) => gateOf(callId).fail(error),
  }
}

/** Resolves after a few turns of the event loop: enough for any microtask-driven work to happen. */
export async function drain(turns = 3): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise<void>((resolve) => setImmediate(resolve))
}
