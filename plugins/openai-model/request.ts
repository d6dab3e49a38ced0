/**
 * Maps a host `ModelRequest` (SPEC §1.7) to a streaming chat-completions request body.
 */
import type {
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageFunctionToolCall,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions'
import type { ContentBlock, ModelMessage, ModelRequest, ToolSchema } from '../../lib/types.ts'

/** Longest wait for the response headers and for each later chunk, unless configured. */
export const defaultTimeoutMs = 60_000

/**
 * Builds the body for `model`. The system prompt becomes a leading system message (omitted when
 * empty); `tools` and `max_tokens` appear only when the request has them. Tool calls and tool
 * results are sent only in pairs: an assistant tool call goes with the results right after its
 * message that answer it, and a result with no such call is left out.
 */
export function buildChatRequest(request: ModelRequest, model: string): ChatCompletionCreateParamsStreaming {
  const messages: ChatCompletionMessageParam[] = []
  if (request.system) messages.push({ role: 'system', content: request.system })
  const history = request.messages
  // the calls of the last assistant message that have a result right after it
  let answered: ReadonlySet<string> = new Set()
  for (let index = 0; index < history.length; index++) {
    const message = history[index]!
    if (message.role === 'assistant') answered = resultsAfter(history, index)
    else if (message.role === 'tool') {
      if (!answered.has(message.callId)) continue
    } else answered = new Set()
    const mapped = toChatMessage(message, answered)
    if (mapped) messages.push(mapped)
  }
  const body: ChatCompletionCreateParamsStreaming = {
    model,
    messages,
    stream: true,
    stream_options: { include_usage: true },
  }
  if (request.tools && request.tools.length > 0) body.tools = request.tools.map(toChatTool)
  if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens
  return body
}

/**
 * The call ids of the assistant message at `index` that the tool results right after it answer. A
 * turn cancelled between a step's calls leaves the calls it never ran without a result, and servers
 * refuse an assistant message whose calls are not all answered right after it, or a result whose
 * call it does not hold (HTTP 400, on every later request of the agent): neither is sent.
 */
function resultsAfter(history: readonly ModelMessage[], index: number): Set<string> {
  const calls = new Set<string>()
  for (const block of history[index]!.content) if (block.type === 'tool-call') calls.add(block.id)
  const ids = new Set<string>()
  for (let next = index + 1; next < history.length; next++) {
    const message = history[next]!
    if (message.role !== 'tool') break
    if (calls.has(message.callId)) ids.add(message.callId)
  }
  return ids
}

/**
 * Text blocks are joined with a newline; reasoning blocks are dropped (chat-completions has no
 * input slot for them). An assistant message keeps the tool calls in `answered` only; one with
 * neither text nor such calls (a usage-only message) is skipped: several servers reject empty
 * assistant turns.
 */
function toChatMessage(message: ModelMessage, answered: ReadonlySet<string>): ChatCompletionMessageParam | undefined {
  if (message.role === 'tool') {
    return { role: 'tool', tool_call_id: message.callId, content: joinText(message.content) }
  }
  if (message.role === 'user') return { role: 'user', content: joinText(message.content) }
  const text = joinText(message.content)
  const toolCalls: ChatCompletionMessageFunctionToolCall[] = []
  for (const block of message.content) {
    if (block.type !== 'tool-call' || !answered.has(block.id)) continue
    toolCalls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: block.arguments } })
  }
  if (toolCalls.length === 0) return text ? { role: 'assistant', content: text } : undefined
  return { role: 'assistant', content: text || null, tool_calls: toolCalls }
}

function joinText(content: readonly ContentBlock[]): string {
  const parts: string[] = []
  for (const block of content) if (block.type === 'text') parts.push(block.text)
  return parts.join('\n')
}

function toChatTool(tool: ToolSchema): ChatCompletionTool {
  return { type: 'function', function: { name: tool.name, description: tool.description, parameters: tool.parameters } }
}
