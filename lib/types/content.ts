/**
 * Content blocks and usage (SPEC §1.1).
 */

export interface TextBlock { type: 'text'; text: string }
export interface ReasoningBlock { type: 'reasoning'; text: string }
/** A model's request to run a tool; `arguments` is JSON text, as the model sent it. */
export interface ToolCallBlock { type: 'tool-call'; id: string; name: string; arguments: string }
export type ContentBlock = TextBlock | ReasoningBlock | ToolCallBlock

export interface Usage { inputTokens: number; outputTokens: number }
