/**
 * A model route for queue and tree tests: each agent's stream waits until the test releases its
 * prompt, then answers `done <prompt>` with fixed usage. No timers.
 */
import type { ModelAdapter, ModelRequest, StreamPart } from '../../lib/types.ts'

export interface LatchModel {
  adapter: ModelAdapter
  /** Prompts whose stream is waiting now, in the order they were sent. */
  readonly waiting: string[]
  /** Resolves once a stream for `prompt` is waiting. */
  entered(prompt: string): Promise<void>
  release(prompt: string): void
}

function promptOf(request: ModelRequest): string {
  const first = request.messages.find((message) => message.role === 'user')
  const block = first?.content[0]
  return block?.type === 'text' ? block.text : ''
}

export function createLatchModel(): LatchModel {
  const latches = new Map<string, { open: () => void; opened: Promise<void> }>()
  const arrivals = new Map<string, () => void>()
  const arrived = new Map<string, Promise<void>>()
  const waiting: string[] = []
  const latchOf = (prompt: string) => {
    let latch = latches.get(prompt)
    if (!latch) {
      let open!: () => void
      const opened = new Promise<void>((resolve) => (open = resolve))
      latches.set(prompt, (latch = { open, opened }))
    }
    return latch
  }
  const arrival = (prompt: string) => {
    let promise = arrived.get(prompt)
    if (!promise) {
      promise = new Promise<void>((resolve) => arrivals.set(prompt, resolve))
      arrived.set(prompt, promise)
    }
    return promise
  }
  return {
    waiting,
    entered: arrival,
    release: (prompt) => latchOf(prompt).open(),
    adapter: {
      async *stream(request): AsyncGenerator<StreamPart> {
        const prompt = promptOf(request)
        waiting.push(prompt)
        void arrival(prompt)
        arrivals.get(prompt)!()
        await Promise.race([
          latchOf(prompt).opened,
          new Promise<never>((_, reject) => request.signal.addEventListener('abort', () => reject(request.signal.reason), { once: true })),
        ])
        waiting.splice(waiting.indexOf(prompt), 1)
        yield { type: 'text-delta', text: `done ${prompt}` }
        yield { type: 'finish', reason: 'stop', usage: { inputTokens: 3, outputTokens: 1 } }
      },
    },
  }
}
