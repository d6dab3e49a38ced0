/**
 * A model for background-child tests: the parent answers from a script, each child from a gate
 * keyed by its prompt, so a test decides when (and how) every child finishes, without timers.
 */
import type { Context } from 'cordis'
import type { ModelAdapter, ModelRequest, StreamPart } from '../../lib/types.ts'
import type { ScriptedResponse } from '../../plugins/scripted-model/index.ts'

export const ROUTED_PROVIDER = 'routed'

export interface ChildGate {
  /** Resolves when the child's model call is waiting on this gate. */
  entered: Promise<void>
  /** Lets the child answer with `response` (its text is streamed first). */
  answer(response: ScriptedResponse): void
  /** Makes the child's model call fail with `error`. */
  fail(error: Error): void
}

export interface RoutedModel {
  /** Appends the parent's next answers (consumed in order, by the parent only). */
  parent(...responses: (ScriptedResponse | ((request: ModelRequest) => ScriptedResponse))[]): void
  /** The gate of the child whose prompt is `prompt`, made on first use. */
  child(prompt: string): ChildGate
  /** Requests the parent made, in order. */
  readonly parentRequests: ModelRequest[]
  /** Parent answers not used yet. */
  readonly pendingParent: number
}

interface GateState extends ChildGate {
  outcome: Promise<ScriptedResponse>
  markEntered(): void
}

function firstText(request: ModelRequest): string {
  const first = request.messages[0]?.content[0]
  return first?.type === 'text' ? first.text : ''
}

function waitOrAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason)
    const onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort)
        resolve(value)
      },
      (error) => {
        signal.removeEventListener('abort', onAbort)
        reject(error)
      },
    )
  })
}

function* streamOf(response: ScriptedResponse): Generator<StreamPart> {
  if (response.text) yield { type: 'text-delta', text: response.text }
  const calls = response.toolCalls ?? []
  for (const [index, call] of calls.entries()) {
    const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {})
    yield { type: 'tool-call', id: call.id ?? `routed_${index}`, name: call.name, arguments: args }
  }
  yield { type: 'finish', reason: response.finish ?? (calls.length ? 'tool-calls' : 'stop'), usage: response.usage ?? { inputTokens: 3, outputTokens: 2 } }
}

/** Registers provider `routed` on `root`; the agent `isParent` picks answers from the parent script. */
export function installRoutedModel(root: Context, isParent: (request: ModelRequest) => boolean): RoutedModel {
  const script: (ScriptedResponse | ((request: ModelRequest) => ScriptedResponse))[] = []
  const gates = new Map<string, GateState>()
  const parentRequests: ModelRequest[] = []
  const gateOf = (prompt: string): GateState => {
    let gate = gates.get(prompt)
    if (gate) return gate
    let settle!: (outcome: ScriptedResponse | Error) => void
    const settled = new Promise<ScriptedResponse | Error>((resolve) => (settle = resolve))
    let markEntered!: () => void
    const entered = new Promise<void>((resolve) => (markEntered = resolve))
    gate = {
      entered,
      markEntered,
      outcome: settled.then((value) => (value instanceof Error ? Promise.reject(value) : value)),
      answer: (response) => settle(response),
      fail: (error) => settle(error),
    }
    // an unanswered gate's outcome is only awaited by a model call; never leave it unhandled
    gate.outcome.catch(() => {})
    gates.set(prompt, gate)
    return gate
  }
  const adapter: ModelAdapter = {
    async *stream(request) {
      if (isParent(request)) {
        parentRequests.push(request)
        const next = script.shift()
        if (next === undefined) throw new Error('routed model: the parent has no more answers')
        yield* streamOf(typeof next === 'function' ? next(request) : next)
        return
      }
      const gate = gateOf(firstText(request))
      gate.markEntered()
      yield* streamOf(await waitOrAbort(gate.outcome, request.signal))
    },
  }
  root.models.register(ROUTED_PROVIDER, adapter)
  return {
    parent: (...responses) => void script.push(...responses),
    child: (prompt) => gateOf(prompt),
    parentRequests,
    get pendingParent() {
      return script.length
    },
  }
}
