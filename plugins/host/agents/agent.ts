/**
 * One agent: its session, options, turn queue and (lazily) its scope context.
 */
import type { Context } from 'cordis'
import { copyContent } from '../../../lib/content.ts'
import { AgentDisposedError, thrownMessage } from '../../../lib/errors.ts'
import { toFrozenJson } from '../../../lib/json/frozen-json.ts'
import { MAX_JSON_DATA_DEPTH } from '../../../lib/json/json-data.ts'
import { isKnownEvent } from '../../../lib/session/session-event.ts'
import { cancelCauseProblem } from '../../../lib/session/session-event-shape.ts'
import type {
  AgentOptions,
  AgentStatus,
  CancelCause,
  ContentBlock,
  ModelMessage,
  TurnEndReason,
} from '../../../lib/types.ts'
import { kScope } from '../scope.ts'
import type { SessionLog } from '../sessions/session-store.ts'
import { AgentRecord, type DisposalServices, type RecordedAgent } from './agent-record.ts'
import { completed, type LoopServices, runTurn } from './loop.ts'
import { TurnState } from './turn-state.ts'

export { TurnCancelledError } from './turn-state.ts'

interface QueuedMessage {
  content: ContentBlock[]
  source: 'user' | 'plugin'
}

/** What an agent runs with: the loop's services, the maker of its context, and what its disposal needs. */
export interface AgentRuntime extends LoopServices {
  /** Makes the agent's context, on first `agent.ctx` (see agent-context.ts). */
  createContext(agent: HostAgent): Context
  disposal: DisposalServices
}

// shared by every user/message event (event data is frozen): one object less per live turn
const messageSources = Object.freeze({
  user: Object.freeze({ kind: 'user' as const }),
  plugin: Object.freeze({ kind: 'plugin' as const }),
})

/**
 * The message as session content: checked and copied before the turn starts, so a bad block
 * (wrong field types, extra keys holding non-JSON or deeply nested values) throws and changes nothing.
 */
function toContent(content: string | ContentBlock[]): ContentBlock[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }]
  if (!Array.isArray(content)) throw new TypeError('message content must be a string or an array of content blocks')
  return copyContent(content, 'message content block')
}

/**
 * `cause` as the frozen copy its turn/end holds (turn/end data → reason → cause: two levels above
 * it), checked to be an object with a string `kind`: a seed or a stored session holding a cause of
 * another shape is refused (`lib/session/session-event-shape.ts`), and what the loop writes must read back.
 */
function copyCause(cause: CancelCause): CancelCause {
  let copy: unknown
  try {
    copy = toFrozenJson(cause, MAX_JSON_DATA_DEPTH - 2)
  } catch (error) {
    throw new TypeError(`agent cancel cause must be JSON data: ${thrownMessage(error)}`, { cause: error })
  }
  const problem = cancelCauseProblem(copy)
  if (problem) throw new TypeError(`agent cancel cause ${problem}`)
  return copy as CancelCause
}

/**
 * One turn, carrying what the agent needs only while it is running (input queued behind the turn,
 * `whenIdle()` waiters, the model messages synced so far): each turn hands them to the next, and
 * an idle agent holds none of them.
 */
class AgentTurn extends TurnState {
  queue?: QueuedMessage[] = undefined
  idle?: { promise: Promise<void>; resolve: () => void } = undefined
  /** Model messages synced from the log so far (plugins may append too). */
  messages?: ModelMessage[] = undefined
  synced = 0
  /** Set while its `turn/end` is appended: input then queues behind it, and there is nothing left to cancel. */
  ended = false
}

export class HostAgent implements RecordedAgent {
  // `declare`d fields, assigned in the constructor: see docs/performance.md, "Declared fields"
  declare readonly id: string
  declare readonly session: SessionLog
  declare readonly options: Readonly<AgentOptions>
  private declare readonly services: AgentRuntime
  /**
   * Its scope and bookkeeping, made with the agent, so it can be bound once (session, turn); read
   * it through `scopeOf`.
   */
  declare readonly [kScope]: AgentRecord
  declare status: AgentStatus
  /** Set once disposal starts: no new input is accepted. */
  declare closed: boolean
  /** The running (or ending) turn; `undefined` exactly while the agent is idle. */
  #current?: AgentTurn
  #turns: number

  constructor(
    id: string,
    session: SessionLog,
    options: Readonly<AgentOptions>,
    services: AgentRuntime,
    owner: RecordedAgent | undefined,
    callerCtx: Context,
  ) {
    this.id = id
    this.session = session
    this.options = options
    this.services = services
    this[kScope] = new AgentRecord(this, owner, callerCtx, services.disposal)
    this.status = 'idle'
    this.closed = false
    // a resumed or seeded session goes on counting; indexed, since a new one (most) has no events
    const events = session.events
    let turns = 0
    for (let i = 0; i < events.length; i++) if (events[i]!.type === 'turn/start') turns++
    this.#turns = turns
  }

  /** The agent's scope context, created on first access (its cordis fiber only on demand). */
  get ctx(): Context {
    // kept by the scope, not here: one slot less on every agent
    const made = this[kScope].ctx
    if (made) return made
    if (this.closed) throw new AgentDisposedError(this.id)
    return this.services.createContext(this)
  }

  followup(content: string | ContentBlock[], source: 'user' | 'plugin' = 'user'): void {
    if (this.closed) throw new AgentDisposedError(this.id)
    // `user/message` is appended without the JSON-data walk: a source outside the two would put
    // `undefined` (or, for "constructor", a function) into the session
    if (source !== 'user' && source !== 'plugin') throw new TypeError('message source must be "user" or "plugin"')
    const blocks = toContent(content)
    const current = this.#current
    if (current) {
      ;(current.queue ??= []).push({ content: blocks, source })
      return
    }
    // an idle agent starts at once: its message needs no queue entry
    this.beginTurn(blocks, source, undefined)
  }

  whenIdle(): Promise<void> {
    const current = this.#current
    if (!current) return Promise.resolve()
    if (!current.idle) {
      let resolve!: () => void
      const promise = new Promise<void>((r) => (resolve = r))
      current.idle = { promise, resolve }
    }
    return current.idle.promise
  }

  /**
   * Cancels the running turn with `cause` (nothing when idle) and drops input queued behind it.
   * The cause goes into the turn's `turn/end` as a frozen copy: a cause that is not JSON data
   * throws a `TypeError` naming it, before anything changes (appended as it was, it would fail the
   * turn's end and leave the agent running), and so does one that is not an object with a string
   * `kind` (`agent cancel cause kind must be a string, got number`).
   */
  cancel(cause: CancelCause): void {
    const current = this.#current
    if (!current) return
    const copy = copyCause(cause)
    current.queue = undefined
    if (!current.ended) current.cancel(copy)
  }

  /** Model messages for the whole log, synced incrementally while a turn runs (plugins may append too). */
  messages(): readonly ModelMessage[] {
    const events = this.session.events
    const current = this.#current
    const messages = current?.messages ?? []
    for (let i = current ? current.synced : 0; i < events.length; i++) {
      const event = events[i]
      if (!isKnownEvent(event)) continue
      switch (event.type) {
        case 'user/message':
          messages.push({ role: 'user', content: event.data.content })
          break
        case 'assistant/message':
          if (event.data.content.length) messages.push({ role: 'assistant', content: event.data.content })
          break
        case 'tool/result': {
          const { data } = event
          messages.push({ role: 'tool', callId: data.callId, name: data.name, isError: data.isError, content: data.content })
          break
        }
      }
    }
    if (current) {
      current.messages = messages
      current.synced = events.length
    }
    return messages.slice()
  }

  // `private`, not `#`: a class with #methods gives every instance a brand slot
  private beginTurn(content: ContentBlock[], source: QueuedMessage['source'], previous: AgentTurn | undefined): void {
    this.status = 'running'
    const turn = ++this.#turns
    const state = new AgentTurn(turn)
    if (previous) {
      state.queue = previous.queue
      state.idle = previous.idle
      state.messages = previous.messages
      state.synced = previous.synced
    }
    this.#current = state
    this.session.appendTurnStart(turn)
    this.session.appendMessage('user/message', { content, source: messageSources[source] })
    runTurn(this, state, this.services).then((reason) => this.endTurn(state, reason))
  }

  private endTurn(state: AgentTurn, reason: TurnEndReason): void {
    // still current while its end is appended: a listener's followup queues behind it
    state.ended = true
    if (reason === completed) this.session.appendTurnEnd(state.turn, completed)
    else this.session.append('turn/end', { turn: state.turn, reason })
    this.#current = undefined
    const next = state.queue?.shift()
    if (next) {
      this.beginTurn(next.content, next.source, state)
      return
    }
    this.status = 'idle'
    state.idle?.resolve()
  }
}
