/**
 * Agents (SPEC §1.3).
 */
import type { Context } from 'cordis'
import type { ApprovalPolicy } from '../approval/policy.ts'
import type { ContentBlock } from './content.ts'
import type { JsonValue } from './json.ts'
import type { CancelCause, Session, SessionEvent } from './session.ts'

export interface AgentOptions {
  provider?: string
  model?: string
  maxTokens?: number
  maxSteps?: number
  subagentDepth?: number
  /** The agent's own approval policy (SPEC §11.1): it can only make its calls more guarded. */
  approval?: ApprovalPolicy
  [key: string]: unknown
}

export type AgentStatus = 'idle' | 'running'

export interface Agent {
  readonly id: string
  /** The agent's scope context, created on first access. Registrations through it are scoped. */
  readonly ctx: Context
  readonly session: Session
  readonly options: Readonly<AgentOptions>
  readonly status: AgentStatus
  /**
   * Enqueues a user message and starts a turn synchronously: `status` is `running` on return.
   * Throws `TypeError` for content that is not a string or valid blocks, or a `source` other than
   * `'user'` or `'plugin'`.
   */
  followup(content: string | ContentBlock[], source?: 'user' | 'plugin'): void
  /** Resolves when no turn is running or queued. */
  whenIdle(): Promise<void>
  /** Clears queued input and aborts the running turn; does nothing on an idle agent. */
  cancel(cause: CancelCause): void
}

export interface CreateAgentOptions {
  sessionId?: string
  header?: {
    cwd?: string
    parentSession?: string
    origin?: 'subagent'
    delegationDepth?: number
    seedLength?: number
    label?: string
    callId?: string
    agent?: string
    approval?: ApprovalPolicy
    /** Recorded instead of the host's secret-free copy of `agentOptions` (SPEC §14). */
    agentOptions?: Readonly<Record<string, JsonValue>>
  }
  seed?: readonly SessionEvent[]
  agentOptions?: AgentOptions
  signal?: AbortSignal
  /** Runs in the unpublished window; may register scoped tools, sections, listeners. */
  setup?(agent: Agent): void | Promise<void>
}

export interface AgentHandle {
  readonly agent: Agent
  /** Memoized: every caller gets the same promise. */
  dispose(): Promise<void>
}
