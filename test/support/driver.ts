/**
 * Driver test support: a scene with `InProcessRun` and a parent agent (so every driver test runs
 * under the invariant checker and ends at the baseline taken before the parent), and a gated model
 * whose answer waits until the test opens the gate (so a run can be held live without timers).
 */
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import type { Agent, AgentOptions, ModelAdapter, StreamPart, SubagentStartRequest } from '../../lib/types.ts'
import { type Scene, scene } from './scene.ts'

export interface DriverHost extends Scene {
  parent: Agent
  request(extra?: Partial<SubagentStartRequest>): SubagentStartRequest
}

export async function createDriverHost(parentOptions: Partial<AgentOptions> = {}): Promise<DriverHost> {
  const s = await scene({ plugins: [InProcessRun] })
  const { agent: parent } = await s.create({ agentOptions: parentOptions as AgentOptions })
  return Object.assign(s, {
    parent,
    request: (extra: Partial<SubagentStartRequest> = {}) => ({ parent, prompt: 'do the task', signal: new AbortController().signal, ...extra }),
  })
}

/** A model route whose streams wait for `open()`; `entered` resolves when a stream is waiting. */
export interface Gate {
  adapter: ModelAdapter
  entered: Promise<void>
  open(text?: string): void
}

export function createGate(): Gate {
  let release!: (text: string) => void
  const opened = new Promise<string>((resolve) => (release = resolve))
  let signalEntered!: () => void
  const entered = new Promise<void>((resolve) => (signalEntered = resolve))
  return {
    entered,
    open: (text = 'done') => release(text),
    adapter: {
      async *stream(request): AsyncGenerator<StreamPart> {
        signalEntered()
        const text = await Promise.race([
          opened,
          new Promise<never>((_, reject) => request.signal.addEventListener('abort', () => reject(request.signal.reason), { once: true })),
        ])
        yield { type: 'text-delta', text }
        yield { type: 'finish', reason: 'stop', usage: { inputTokens: 2, outputTokens: 1 } }
      },
    },
  }
}

/** Collects unhandled rejections while `fn` runs (plus a few turns of the event loop). */
export async function unhandledDuring(fn: () => Promise<void>): Promise<unknown[]> {
  const seen: unknown[] = []
  const onRejection = (reason: unknown) => seen.push(reason)
  process.on('unhandledRejection', onRejection)
  try {
    await fn()
    for (let i = 0; i < 3; i++) await new Promise(setImmediate)
  } finally {
    process.off('unhandledRejection', onRejection)
  }
  return seen
}
