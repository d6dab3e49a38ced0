/**
 * A script for tree scenarios that answers by who is asking, not by arrival order, so the script
 * holds whether sibling calls run one by one or at once: a `ScriptedModel` entry for `repeat()`.
 */
import type { ModelRequest } from '../../lib/types.ts'
import type { ScriptedResponse } from '../../plugins/scripted-model/index.ts'

/** What one agent says: its tool calls on the first request, `text` once it has tool results. */
export interface Line {
  calls?: { id: string; label: string; prompt?: string }[]
  text: string
}

/** `lines` is keyed by the agent's label (`root` for the agent without one). */
export function treeModel(lines: Record<string, Line>): (request: ModelRequest) => ScriptedResponse {
  return (request) => {
    const label = request.agent.session.header.label ?? 'root'
    const line = lines[label]
    if (!line) throw new Error(`no line for "${label}"`)
    const answered = request.messages.some((message) => message.role === 'tool')
    if (line.calls && !answered) {
      return {
        toolCalls: line.calls.map((call) => ({
          id: call.id,
          name: 'subagent',
          arguments: JSON.stringify({ prompt: call.prompt ?? `task for ${call.label}`, label: call.label }),
        })),
        usage: { inputTokens: 10, outputTokens: 2 },
      }
    }
    return { text: line.text, usage: { inputTokens: 10, outputTokens: 1 } }
  }
}
