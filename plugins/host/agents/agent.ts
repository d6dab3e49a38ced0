/**
 * One agent: its session, options, turn queue and (lazily) its scope context.
 */
import type { Context } from 'cordis'
import { copyContent } from '../../../lib/content.ts'
import { AgentDisposedError, SubagentError } from '../../../lib/errors.ts'
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
import { type LoopServices, runTurn, type TurnState } from './loop.ts'

interface QueuedMessage {
  content: ContentBlock[]
  source: 'user' | 'plugin'
}

/** What an agent runs with: the loop's services, and the maker of its context. */
export interface AgentRuntime extends LoopServices {
  /** Makes the agent's context, on first `agent.ctx` (see agent-context.ts). */
  createContext(agent: HostAgent): Context
}

/**
 * The message as session content: checked and copied before the turn starts, so a bad block
 * (wrong field types, extra keys holding non-JSON or deeply nested values) throws and changes nothing.
 */
function toContent(content: string | ContentBlock[]): ContentBlock[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }]
  if (!Array.isArray(content)) throw new TypeError('message content must be a string or an array of content blocks')
  return copyContent(content, 'message content block')
}

/** The cancellation reason a turn's signal aborts with. */
export class TurnCancelledError extends SubagentError {
  override readonly name = 'TurnCancelledError'
  constructor(readonly cancelCause: CancelCause) {
    super('ABORTED', `turn cancelled (${cancelCause.kind})`)
  }
}

export class HostAgent implements Agent {
  /** Made with the agent, so it can be bound once (session, turn); read it through `scopeOf`. */
  readonly [kScope]: AgentScope
  status: AgentStatus = 'idle'
  /** Set once disposal starts: no new input is accepted. */
  closed = false
  #queue?: QueuedMessage[]
  #current?: TurnState & { controller: AbortController }
  #turns: number
  #idle?: { promise: Promise<void>; resolve: () => void }
  #ctx?: Context
  #messages: ModelMessage[] = []
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
    const current = this.#current
    if (!current || current.signal.aborted) return
    current.cause = cause
    current.controller.abort(new TurnCancelledError(cause))
  }

  /** Model messages for the whole log, synced incrementally (plugins may append too). */
  messages(): readonly ModelMessage[] {
    const events = this.session.events
    for (let i = this.#synced; i < events.length; i++) {
      const event = events[i]
      switch (event.type) {
        case 'user/message': {
          const data = event.data as { content: ContentBlock[] }
          this.#messages.push({ role: 'user', content: data.content })
          break
        }
        case 'assistant/message': {
          const data = event.data as { content: ContentBlock[] }
          if (data.content.length) this.#messages.push({ role: 'assistant', content: data.content })
          break
        }
        case 'tool/result': {
          const data = event.data as { callId: string; name: string; isError: boolean; content: ContentBlock[] }
          this.#messages.push({ role: 'tool', callId: data.callId, name: data.name, isError: data.isError, content: data.content })
          break
        }
      }
    }
    this.#synced = events.length
    return this.#messages.slice()
  }

  #start(message: QueuedMessage): void {
    this.status = 'running'
    const turn = ++this.#turns
    const controller = new AbortController()
    const state = { turn, signal: controller.signal, controller, cause: undefined as CancelCause | undefined }
    this.#current = state
    this.session.append('turn/start', { turn, trigger: 'message' })
    this.session.append('user/message', { content: message.content, source: { kind: message.source } })
    const subject = {
      agent: this,
      scope: scopeOf(this),
      session: this.session,
      messages: () => this.messages(),
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
    const idle = this.#idle
    this.#idle = undefined
    idle?.resolve()
  }
}
