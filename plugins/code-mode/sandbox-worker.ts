/**
 * The sandbox worker's entry: it runs one program at a time for the host thread (`worker-pool.ts`)
 * and asks the host for every binding call. A program that stalls this thread stalls only it: the
 * host terminates the worker on timeout or abort.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { adoptCompiledInterpreter, compileInterpreter } from './interpreter-code.ts'
import { runInThread } from './sandbox-run.ts'
import type { BindingCall, CallsMessage, DoneMessage, EncodedResult, HostMessage, StartedMessage } from './worker-protocol.ts'
import { SubagentError } from '../../lib/errors.ts'

const port = parentPort
if (!port) throw new SubagentError('SANDBOX', 'sandbox-worker.ts runs only as a worker thread')

/** Binding calls in flight, by call number; the host answers each with a `settle` message. */
const calls = new Map<number, (result: EncodedResult) => void>()
let nextCall = 0
/** Calls not yet sent: every call started in the same turn goes out in one message. */
let outbox: BindingCall[] = []

port.on('message', (message: HostMessage) => {
  if (message.type === 'settle') {
    const settle = calls.get(message.call)
    calls.delete(message.call)
    settle?.(message.result)
    return
  }
  const { run } = message
  void runInThread({
    ...message,
    onStart: (deadline) => port.postMessage({ type: 'started', run, deadline } satisfies StartedMessage),
    call: (name, args) =>
      new Promise<EncodedResult>((resolve) => {
        const call = ++nextCall
        calls.set(call, resolve)
        if (outbox.length === 0) {
          queueMicrotask(() => {
            port.postMessage({ type: 'calls', run, calls: outbox } satisfies CallsMessage)
            outbox = []
          })
        }
        outbox.push({ call, name, args })
      }),
  }).then((outcome) => {
    // calls a stopped run left unanswered are answered nowhere: forget them
    calls.clear()
    port.postMessage({ type: 'done', run, outcome } satisfies DoneMessage)
  })
})

// the host compiled the interpreter once for every worker; without it, compile while waiting
const { wasmModule } = (workerData ?? {}) as { wasmModule?: object }
if (wasmModule) adoptCompiledInterpreter(wasmModule)
else void compileInterpreter().catch(() => undefined)
