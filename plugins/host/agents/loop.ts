/**
 * The agent loop for one turn (SPEC §1.4). `runTurn` never rejects: every fault becomes a
 * `TurnEndReason`; the caller appends `turn/end`.
 */
import { SubagentError, thrownMessage as messageOf } from '../../../lib/errors.ts'
import { isThenable } from '../../../lib/async/thenable.ts'
import type {
  Agent,
  AgentMeter,
  BudgetLimit,
  ContentBlock,
  ModelMessage,
  StreamPart,
  ToolCallBlock,
  TurnEndReason,
} from '../../../lib/types.ts'
import type { Models } from '../models/index.ts'
import { type AgentScope, type HookDispatcher, kScope } from '../scope.ts'
import type { SessionLog } from '../sessions/session-store.ts'
import type { SystemPrompt } from '../system-prompt/index.ts'
import type { Tools } from '../tools/index.ts'
import { StepParts } from './step-parts.ts'
import { runStepCalls } from './tool-calls.ts'
import { TurnModelRequest } from './model-request.ts'
import type { TurnState } from './turn-state.ts'

export interface LoopServices {
  tools: Tools
  systemPrompt: SystemPrompt
  models: Models
  dispatcher: HookDispatcher
  defaultMaxSteps: number
  /** Installed by `ctx.agents.meter()`; called in order at each step, send and counted message. */
  meters: AgentMeter[]
}

/**
 * What the loop needs from the agent it drives: the host's agent itself, so a turn makes no
 * subject object (nor a closure for its messages).
 */
export interface TurnSubject extends Agent {
  readonly [kScope]: AgentScope
  readonly session: SessionLog
  /** Model messages for the whole session so far, synced from the log. */
  messages(): readonly ModelMessage[]
}

/**
 * What `agent/pre-step` listeners answer: go on, refuse (`blocked`), or stop for a spent tree
 * budget (`budget`, SPEC §9) — the turn ends with that reason and no model request.
 */
export type PreStepDecision =
  | { kind: 'enter' }
  | { kind: 'reject' }
  | { kind: 'budget'; limit: BudgetLimit; used?: number; max?: number }

const enter: PreStepDecision = Object.freeze({ kind: 'enter' })
/**
 * The reason of every turn that ends `completed`, shared (turn/end data is frozen): one object less
 * per live agent, and made of the loop's own values alone, so its `turn/end` needs no JSON-data walk.
 */
export const completed: Readonly<{ kind: 'completed' }> = Object.freeze({ kind: 'completed' })

function failure(error: unknown): TurnEndReason {
  const code = (error as { code?: unknown } | null)?.code
  const message = messageOf(error) || 'unknown error'
  return typeof code === 'string' ? { kind: 'error', error: { message, code } } : { kind: 'error', error: { message } }
}

function isBudgetStop(value: unknown): value is Extract<PreStepDecision, { kind: 'budget' }> {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'budget'
}

/**
 * The `turn/end` reason of a budget stop. A listener's answer goes into `turn/end`, whose append
 * refuses data that is not JSON: checked here, where a throw ends the turn `error` (thrown at the
 * append, it left the agent running for good and an unhandled rejection).
 */
function budgetEnd(decision: Extract<PreStepDecision, { kind: 'budget' }>): TurnEndReason {
  const { limit, used, max } = decision
  if (limit !== 'tokens' && limit !== 'modelRequests' && limit !== 'children') {
    throw new TypeError('budget stop limit must be "tokens", "modelRequests" or "children"')
  }
  if (typeof used !== 'number' || typeof max !== 'number') return { kind: 'budget', limit }
  if (!Number.isFinite(used) || !Number.isFinite(max)) throw new TypeError('budget stop used and max must be finite numbers')
  return { kind: 'budget', limit, used, max }
}

function aborted(state: TurnState): TurnEndReason {
  return { kind: 'aborted', cause: state.cause ?? { kind: 'user' } }
}

/** Runs one turn's steps. Never rejects: a throw anywhere in them ends the turn `error` (or `aborted`). */
export async function runTurn(agent: TurnSubject, state: TurnState, services: LoopServices): Promise<TurnEndReason> {
  // one async layer for the whole turn: the catch is here, not in a wrapper that awaits the steps
  try {
    const { session } = agent
    const { dispatcher, tools, meters } = services
    const scope = agent[kScope]
    const { turn } = state
    const maxSteps = agent.options.maxSteps ?? services.defaultMaxSteps
    for (let step = 1; ; step++) {
      if (state.aborted) return aborted(state)
      if (dispatcher.has('agent/pre-step', scope)) {
        const answer = dispatcher.waterfall<PreStepDecision | PromiseLike<PreStepDecision>>(
          scope,
          'agent/pre-step',
          [agent, { turn, step }],
          () => enter,
        )
        // a synchronous answer costs no tick: an always-on listener (a tree budget) is on every step
        const decision = isThenable(answer) ? await answer : answer
        if (state.aborted) return aborted(state)
        if (decision?.kind === 'reject') return { kind: 'blocked' }
        if (decision?.kind === 'budget') return budgetEnd(decision)
      }
      // indexed, not `for…of`: no iterator when (as mostly) no meter is installed
      for (let i = 0; i < meters.length; i++) {
        const stop = meters[i]!.beforeStep(agent)
        if (stop) return budgetEnd(stop)
      }
      session.appendStepStart(turn, step)
      const outcome = await callModel(agent, scope, state, services, step)
      if (outcome.end) return outcome.end
      const calls = outcome.calls
      if (!calls.length) return completed
      // tools get the signal and are awaited: one may need to clean up (the subagent tool
      // disposes its run) before the turn ends
      const running = runStepCalls(calls, { agent, session, tools, turn, step, cancellation: state })
      if (running !== undefined) await running
      if (state.aborted) return aborted(state)
      if (dispatcher.has('agent/turn-stop', scope)) {
        let stop = dispatcher.bail(scope, 'agent/turn-stop', agent, { turn, step })
        // an async listener's answer is its promise: await it, so a rejection ends the turn `error`
        // (instead of going unhandled) and a falsy resolution does not end it
        if (typeof (stop as PromiseLike<unknown> | null)?.then === 'function') stop = await stop
        if (state.aborted) return aborted(state)
        if (stop) return completed
      }
      if (step >= maxSteps) {
        return { kind: 'error', error: { message: `turn exceeded maxSteps ${maxSteps}`, code: 'MAX_STEPS' } }
      }
    }
  } catch (error) {
    return state.aborted ? aborted(state) : failure(error)
  }
}

/** The stream's iterator; throws a clear error for an adapter that returned no async iterable. */
function iterate(stream: unknown, provider: string): AsyncIterator<StreamPart> {
  const method = (stream as { [Symbol.asyncIterator]?: unknown } | null | undefined)?.[Symbol.asyncIterator]
  if (typeof method !== 'function') {
    throw new SubagentError('MODEL_FAILED', `model adapter for provider "${provider}" returned no async iterable`)
  }
  return method.call(stream) as AsyncIterator<StreamPart>
}

interface ModelOutcome {
  end?: TurnEndReason
  calls: readonly ToolCallBlock[]
}

// the outcome of every step that called no tool: most steps, and every step of a plain child
const noCalls: ModelOutcome = Object.freeze({ calls: Object.freeze([]) })

async function callModel(
  agent: TurnSubject,
  scope: AgentScope,
  state: TurnState,
  services: LoopServices,
  step: number,
): Promise<ModelOutcome> {
  const { session } = agent
  const { turn } = state
  const { provider, model, maxTokens } = agent.options
  if (typeof provider !== 'string' || !provider) {
    return { end: { kind: 'error', error: { message: `agent "${agent.id}" has no model provider`, code: 'NO_MODEL' } }, calls: [] }
  }
  const adapter = services.models.resolve(provider, agent)
  if (!adapter) {
    return { end: { kind: 'error', error: { message: `no model adapter for provider "${provider}"`, code: 'NO_MODEL' } }, calls: [] }
  }
  if (typeof model !== 'string' || !model) {
    return { end: { kind: 'error', error: { message: `agent "${agent.id}" has no model`, code: 'NO_MODEL' } }, calls: [] }
  }
  const system = services.systemPrompt.assemble(agent).text
  const schemas = services.tools.schemas(agent)
  const request = new TurnModelRequest(agent, model, system, agent.messages(), schemas, maxTokens, state)
  // the last word before the send, in the same synchronous stretch: a budget counts the request
  // here (SPEC §9: when sent, whether or not it succeeds) and may still stop it
  const { dispatcher, meters } = services
  if (dispatcher.has('agent/model-request', scope)) {
    const stop = dispatcher.bail(scope, 'agent/model-request', agent, { turn, step, provider, model })
    if (isBudgetStop(stop)) return { end: budgetEnd(stop), calls: [] }
  }
  for (let i = 0; i < meters.length; i++) {
    const stop = meters[i]!.request(agent)
    if (stop) return { end: budgetEnd(stop), calls: [] }
  }
  const parts = iterate(adapter.stream(request), provider)
  const read = new StepParts(provider, session, turn, step)
  try {
    await state.read(parts, read)
  } catch (error) {
    // let the adapter clean up, without waiting for one that ignores its signal
    Promise.resolve()
      .then(() => parts.return?.())
      .catch(() => {})
    if (!state.aborted) {
      // no message holds the text: the compact deltas keep it as one string, not as every piece
      read.settle(read.streamed())
      return { end: failure(error), calls: [] }
    }
    const streamed = read.streamed()
    const content: ContentBlock[] = streamed ? [{ type: 'text', text: streamed }] : []
    session.append('assistant/message', { turn, step, content, interrupted: true })
    read.settle(streamed)
    return { end: aborted(state), calls: [] }
  }
  const { calls, finish, usage } = read
  const truncated = finish === 'max-tokens'
  const streamed = read.streamed()
  // a truncated step's tool calls are incomplete: drop them. Exact-size arrays (the message is
  // held as long as the session is): pushing calls onto `[]` would reserve room for 17
  const kept = truncated ? undefined : calls
  const textBlocks: ContentBlock[] | undefined = streamed ? [{ type: 'text', text: streamed }] : undefined
  const content: ContentBlock[] = kept ? (textBlocks ? textBlocks.concat(kept) : kept.slice()) : (textBlocks ?? [])
  // counted before the append: an observer of the message's `session/event` sees it in the figures.
  // Frozen first: the message records this object without a JSON-data walk, so a meter must not
  // be able to change it (a write throws, and the throw ends the turn `error`)
  if (usage) {
    Object.freeze(usage)
    for (let i = 0; i < meters.length; i++) meters[i]!.usage(agent, usage)
  }
  // every piece was checked as it was read (text, calls, the usage copy): no JSON-data walk
  session.appendMessage('assistant/message', usage ? { turn, step, content, usage } : { turn, step, content })
  // from now on the compact deltas read their text from the message's
  read.settle(streamed)
  if (truncated) return { end: { kind: 'max-tokens' }, calls: [] }
  return calls ? { calls } : noCalls
}
