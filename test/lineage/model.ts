/**
 * A model route for tree scenarios that answers by who is asking, not by arrival order, so the
 * script holds whether sibling calls run one by one or at once.
 */
import type { ModelAdapter, ModelRequest, StreamPart } from '../../lib/types.ts'

/** What one agent says: its tool calls on the first request, `text` once it has tool results. */
export interface Line {
  calls?: { id: string; label: string; prompt?: string }[]
  text: string
}

/** `lines` is keyed by the agent's label (`root` for the agent without one). */
export function treeModel(lines: Record<string, Line>): ModelAdapter {
  return {
    async *stream(request: ModelRequest): AsyncGenerator<StreamPart> {
      const label = request.agent.session.header.label ?? 'root'
      const line = lines[label]
      if (!line) throw new Error(`no line for "${label}"`)
      const answered = request.messages.some((message) => message.role === 'tool')
      if (line.calls && !answered) {
        for (const call of line.calls) {
          const args = JSON.stringify({ prompt: call.prompt ?? `task for ${call.label}`, label: call.label })
          yield { type: 'tool-call', id: call.id, name: 'subagent', arguments: args }
        }
        yield { type: 'finish', reason: 'tool-calls', usage: { inputTokens: 10, outputTokens: 2 } }
        return
      }
      yield { type: 'text-delta', text: line.text }
      yield { type: 'finish', reason: 'stop', usage: { inputTokens: 10, outputTokens: 1 } }
    },
  }
}
