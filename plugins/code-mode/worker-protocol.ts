/**
 * The messages between the host thread and a sandbox worker. Only strings, numbers and plain
 * objects cross: a binding's arguments and results travel as JSON text, as they enter QuickJS.
 */
import type { JsonValue } from '../../lib/types.ts'

export type SandboxOutcome = { ok: true; value: JsonValue | undefined } | { ok: false; error: string }

/** A binding call's result as it enters the sandbox: JSON text (or nothing), or an error. */
export type EncodedResult = { json: string | undefined } | { error: { message: string; code?: string } }

/** Host → worker: run one program, for at most `timeoutMs` from when its interpreter is ready. */
export interface RunMessage {
  type: 'run'
  run: number
  code: string
  names: string[]
  timeoutMs: number
  memoryBytes: number
}

/** Host → worker: the result of a binding call the worker asked for. */
export interface SettleMessage {
  type: 'settle'
  run: number
  call: number
  result: EncodedResult
}

/** Worker → host: the program's time starts now (`deadline`, a `Date.now()` time). */
export interface StartedMessage {
  type: 'started'
  run: number
  deadline: number
}

/** One binding call: the program called `tools.<name>(args)`. */
export interface BindingCall {
  call: number
  name: string
  args: string | undefined
}

/**
 * Worker → host: the binding calls the program started in one turn of its job loop, together, so
 * that calls started at once (e.g. under `Promise.all`) also start at once on the host.
 */
export interface CallsMessage {
  type: 'calls'
  run: number
  calls: BindingCall[]
}

/** Worker → host: the run ended; every call it made has been settled, unless it was stopped. */
export interface DoneMessage {
  type: 'done'
  run: number
  outcome: SandboxOutcome
}

export type HostMessage = RunMessage | SettleMessage
export type WorkerMessage = StartedMessage | CallsMessage | DoneMessage
