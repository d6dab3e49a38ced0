/**
 * Driver test support: a host with `InProcessRun`, a parent agent, and a gated model whose answer
 * waits until the test opens the gate (so a run can be held live without timers).
 */
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import type { Agent, ModelAdapter, StreamPart, SubagentStartRequest } from '../../lib/types.ts'
import { createHost, type TestHost } from './harness.ts'

export interface DriverHost extends TestHost {
  parent: Agent
  request(extra?: Partial<SubagentStartRequest>): SubagentStartRequest
}

export async function createDriverHost(parentOptions: Record<string, unknown> = {}): Promise<DriverHost> {
  const host = await createHost()
  await host.root.plugin(InProcessRun)
  const parent = await host.agent(parentOptions)
  return {
    ...host,
    parent,
    request: (extra = {}) => ({ parent, prompt: 'do the task', signal: new AbortController().signal, ...extra }),
  }
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
