/**
 * One agent: its session, options, turn queue and (lazily) its scope context.
 */
import type { Context } from 'cordis'
import { copyContent } from '../../../lib/content.ts'
import { AgentDisposedError } from '../../../lib/errors.ts'
import { isKnownEvent } from '../../../lib/session-event.ts'
import type {
  Agent,
  AgentOptions,
  AgentStatus,
  CancelCause,
  ContentBlock,
  ModelMessage,
  TurnEndReason,
} from '../../../lib/types.ts'
import { AgentScope, kScope, scopeOf } from '../scope.ts'
import type { SessionLog } from '../sessions/session-store.ts'
import { type LoopServices, runTurn } from './loop.ts'
import { TurnState } from './turn-state.ts'

export { TurnCancelledError } from './turn-state.ts'

interface QueuedMessage {
  content: ContentBlock[]
  source: 'user' | 'plugin'
}

/** What an agent runs with: the loop's services, and the maker of its context. */
export interface AgentRuntime extends LoopServices {
  /** Makes the agent's context, on first `agent.ctx` (see agent-context.ts). */
  createContext(agent: HostAgent): Context
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

export class HostAgent implements Agent {
  /** Made with the agent, so it can be bound once (session, turn); read it through `scopeOf`. */
  readonly [kScope]: AgentScope
  status: AgentStatus = 'idle'
  /** Set once disposal starts: no new input is accepted. */
  closed = false
  #queue?: QueuedMessage[]
  #current?: TurnState
  #turns: number
  #idle?: { promise: Promise<void>; resolve: () => void }
  #ctx?: Context
  /** Model messages synced from the log so far; dropped while idle (rebuilt by the next turn). */
  #messages?: ModelMessage[]
  #synced = 0

  constructor(
    readonly id: string,
    readonly session: SessionLog,
    readonly options: Readonly<AgentOptions>,
    private readonly services: AgentRuntime,
    owner: Agent | undefined,
    callerCtx: Context,
  ) {
    this[kScope] = new AgentScope(this, owner, callerCtx)
    let turns = 0
    for (const event of session.events) if (event.type === 'turn/start') turns++
    this.#turns = turns
  }

  /** The agent's scope context, created on first access (its cordis fiber only on demand). */
  get ctx(): Context {
    if (this.#ctx) return this.#ctx
    if (this.closed) throw new AgentDisposedError(this.id)
    return (this.#ctx = this.services.createContext(this))
  }

  followup(content: string | ContentBlock[], source: 'user' | 'plugin' = 'user'): void {
    if (this.closed) throw new AgentDisposedError(this.id)
    const message = { content: toContent(content), source }
    if (this.status === 'running') {
      ;(this.#queue ??= []).push(message)
      return
    }
    this.#start(message)
  }

  whenIdle(): Promise<void> {
    if (this.status === 'idle') return Promise.resolve()
    if (!this.#idle) {
      let resolve!: () => void
      const promise = new Promise<void>((r) => (resolve = r))
      this.#idle = { promise, resolve }
    }
    return this.#idle.promise
  }

  cancel(cause: CancelCause): void {
    this.#queue = undefined
    this.#current?.cancel(cause)
  }

  /** Model messages for the whole log, synced incrementally (plugins may append too). */
  messages(): readonly ModelMessage[] {
    const events = this.session.events
    const messages = (this.#messages ??= [])
    for (let i = this.#synced; i < events.length; i++) {
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
    this.#synced = events.length
    return messages.slice()
  }

  #start(message: QueuedMessage): void {
    this.status = 'running'
    const turn = ++this.#turns
    const state = new TurnState(turn)
    this.#current = state
    this.session.append('turn/start', { turn, trigger: 'message' })
    this.session.append('user/message', { content: message.content, source: messageSources[message.source] })
    const agent = this
    const subject = {
      agent,
      scope: scopeOf(this),
      session: this.session,
      // a method, not an arrow: under tsx (keepNames) a named arrow is renamed per turn, which
      // turns the function object into a dictionary (≈ 0.25 KB and a slow path every turn)
      messages() {
        return agent.messages()
      },
    }
    runTurn(subject, state, this.services).then((reason) => this.#finish(turn, reason))
  }

  #finish(turn: number, reason: TurnEndReason): void {
    this.#current = undefined
    this.session.append('turn/end', { turn, reason })
    const next = this.#queue?.shift()
    if (next) {
      this.#start(next)
      return
    }
    this.status = 'idle'
    // an idle agent holds its log, not a second copy of it as model messages
    this.#messages = undefined
    this.#synced = 0
    const idle = this.#idle
    this.#idle = undefined
    idle?.resolve()
  }
}
