/**
 * The request the loop hands a model adapter (SPEC §1.7), with the turn's signal made on first read.
 */
import type { Agent, ModelMessage, ModelRequest, ToolSchema } from '../../../lib/types.ts'
import type { TurnState } from './turn-state.ts'

/**
 * A `ModelRequest` whose `signal` is an own, enumerable accessor reading the turn's lazily made
 * signal (see `TurnState`), so an adapter that never reads it costs no `AbortController`. One
 * accessor shared by every request keeps these objects in V8's fast mode: a getter written in an
 * object literal makes a dictionary-mode object with its own getter closure on every request
 * (≈ 0.6 KB). `tools` and `maxTokens` are own properties only when set.
 */
export class TurnModelRequest implements ModelRequest {
  static readonly #signal: PropertyDescriptor = {
    get(this: TurnModelRequest): AbortSignal {
      return this.#state.signal
    },
    enumerable: true,
  }

  // `declare`d fields, assigned in the constructor: see docs/performance.md, "Declared fields"
  declare readonly agent: Agent
  declare readonly model: string
  declare readonly system: string
  declare readonly messages: readonly ModelMessage[]
  declare readonly signal: AbortSignal
  declare readonly tools?: readonly ToolSchema[]
  declare readonly maxTokens?: number
  readonly #state: TurnState

  constructor(
    agent: Agent,
    model: string,
    system: string,
    messages: readonly ModelMessage[],
    tools: readonly ToolSchema[],
    maxTokens: number | undefined,
    state: TurnState,
  ) {
    this.agent = agent
    this.model = model
    this.system = system
    this.messages = messages
    this.#state = state
    if (tools.length) (this as { tools?: readonly ToolSchema[] }).tools = tools
    if (maxTokens !== undefined) (this as { maxTokens?: number }).maxTokens = maxTokens
    Object.defineProperty(this, 'signal', TurnModelRequest.#signal)
  }
}
