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
 * empty); `tools` and `max_tokens` appear only when the request has them.
 */
export function buildChatRequest(request: ModelRequest, model: string): ChatCompletionCreateParamsStreaming {
  const messages: ChatCompletionMessageParam[] = []
  if (request.system) messages.push({ role: 'system', content: request.system })
  for (const message of request.messages) {
    const mapped = toChatMessage(message)
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
 * Text blocks are joined with a newline; reasoning blocks are dropped (chat-completions has no
 * input slot for them). An assistant message with neither text nor tool calls (a usage-only
 * message) is skipped: several servers reject empty assistant turns.
 */
function toChatMessage(message: ModelMessage): ChatCompletionMessageParam | undefined {
  if (message.role === 'tool') {
    return { role: 'tool', tool_call_id: message.callId, content: joinText(message.content) }
  }
  if (message.role === 'user') return { role: 'user', content: joinText(message.content) }
  const text = joinText(message.content)
  const toolCalls: ChatCompletionMessageFunctionToolCall[] = []
  for (const block of message.content) {
    if (block.type !== 'tool-call') continue
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
