/**
 * System prompts (SPEC §1.6) and model adapters (SPEC §1.7).
 */
import type { Agent } from './agent.ts'
import type { ContentBlock, Usage } from './content.ts'
import type { ToolSchema } from './tool.ts'

export interface PromptSection { name: string; order: number; text: string }
export interface PromptAssembly { sections: PromptSection[] }

export type ModelMessage =
  | { role: 'user'; content: ContentBlock[] }
  | { role: 'assistant'; content: ContentBlock[] }
  | { role: 'tool'; callId: string; name: string; isError: boolean; content: ContentBlock[] }

export interface ModelRequest {
  agent: Agent
  model: string
  system: string
  messages: readonly ModelMessage[]
  tools?: readonly ToolSchema[]
  maxTokens?: number
  signal: AbortSignal
}

export type FinishReason = 'stop' | 'tool-calls' | 'max-tokens'

export type StreamPart =
  | { type: 'text-delta'; text: string }
  | { type: 'tool-call'; id: string; name: string; arguments: string }
  | { type: 'finish'; reason: FinishReason; usage?: Usage }

export interface ModelAdapter {
  stream(request: ModelRequest): AsyncIterable<StreamPart>
}
