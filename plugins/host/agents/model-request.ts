/**
 * The request the loop hands a model adapter (SPEC §1.7), with the turn's signal made on first read.
 */
import type { Agent, ModelMessage, ModelRequest, ToolSchema } from '../../../lib/types.ts'
import { TurnSignalCarrier } from '../turn-signal.ts'
import type { TurnState } from './turn-state.ts'

/**
 * A `ModelRequest` whose `signal` reads the turn's lazily made signal (see `TurnState` and
 * `TurnSignalCarrier`), so an adapter that never reads it costs no `AbortController`. `tools` and
 * `maxTokens` are own properties only when set.
 */
export class TurnModelRequest extends TurnSignalCarrier implements ModelRequest {
  // `declare`d fields, assigned in the constructor: see docs/performance.md, "Declared fields"
  declare readonly agent: Agent
  declare readonly model: string
  declare readonly system: string
  declare readonly messages: readonly ModelMessage[]
  declare readonly tools?: readonly ToolSchema[]
  declare readonly maxTokens?: number

  constructor(
    agent: Agent,
    model: string,
    system: string,
    messages: readonly ModelMessage[],
    tools: readonly ToolSchema[],
    maxTokens: number | undefined,
    state: TurnState,
  ) {
    super(state)
    this.agent = agent
    this.model = model
    this.system = system
    this.messages = messages
    if (tools.length) (this as { tools?: readonly ToolSchema[] }).tools = tools
    if (maxTokens !== undefined) (this as { maxTokens?: number }).maxTokens = maxTokens
    this.defineSignal()
  }
}
