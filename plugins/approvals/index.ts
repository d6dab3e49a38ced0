import type { Context } from 'cordis'
import type Schema from 'schemastery'
import { decideByPolicy, stricter } from '../../lib/approval/policy.ts'
import {
  type ApprovalAnswer,
  type ApprovalDecision,
  type ApprovalRequest,
  currentStep,
  type DecidedBy,
  DECIDED_EVENT,
  type Lineage,
  lineageOf,
  readAnswer,
  REQUESTED_EVENT,
  type RequestedRecord,
} from '../../lib/approval/request.ts'
import { SubagentError, thrownMessage } from '../../lib/errors.ts'
import { redactSecrets } from '../../lib/text/redact.ts'
import type { Agent, ApprovalSubject, ApprovalVerdict, PromptAssembly, ToolExecution } from '../../lib/types.ts'
import { flatUuid } from '../../lib/uuid.ts'
import { text } from '../../locales/index.ts'
import { Dispatch, rawService } from '../../cordis-glue/bridge.ts'
import { listenDirect, updateInPlace } from '../host/index.ts'
import { type ApprovalsConfig, assertConfig, ApprovalsConfig as ConfigSchema } from './config.ts'
import { baselineApproval, chainDecision, childPolicy } from './policy-chain.ts'

export type { ApprovalAnswer, ApprovalDecision, ApprovalRequest, DecidedBy }
export { DECIDED_EVENT, REQUESTED_EVENT }

declare module 'cordis' {
  interface Context {
    approvals: Approvals
  }
  interface Events {
    /**
     * A call waits for a decision (SPEC §11.2): answer it with `ctx.approvals.decide(request.id, …)`,
     * now or later. Heard on the root context for every tree. A throw or rejection is contained
     * and logged; the request stays pending. @mode emit
     */
    'approval/asked'(request: ApprovalRequest): void
    /** A request was decided (by a person, the policy, the timeout, a cancelled turn). Observe-only, contained. @mode emit */
    'approval/decided'(request: ApprovalRequest, decision: ApprovalDecision): void
  }
}

/** The name of the child's capture tool (SPEC §3): its answer, never asked about or denied here. */
const STRUCTURED_OUTPUT = 'structured_output'
/** The system-prompt section of a delegated subagent under `children: 'deny'` (SPEC §11.3). */
export const DELEGATION_POLICY_SECTION = 'delegation-policy'
export const DELEGATION_POLICY_ORDER = 120

/** An answer remembered for a tree (`remember: 'tree'`). */
interface Remembered {
  readonly approved: boolean
  readonly reason: string | undefined
}

/** One asked call. */
interface Pending {
  readonly request: ApprovalRequest
  readonly agent: Agent
  readonly readOnly: boolean
  readonly signal: AbortSignal
  readonly resolve: (decision: ApprovalDecision) => void
  timer: ReturnType<typeof setTimeout> | undefined
  onAbort: (() => void) | undefined
}

type DecisionFields = { approved: boolean; reason?: string; remember?: 'tree'; by: DecidedBy }

const defaults: ApprovalsConfig = { default: 'allow', readOnly: 'allow', rules: [], children: 'route' }

/**
 * A person decides what any agent in a tree may do (SPEC §11): every call is judged at the host's
 * approval point by the strictest of the deployment policy and the calling agent's chain; an
 * asked call waits for `decide`, its timeout or its turn's abort. A config update applies in
 * place, to every call not yet decided. Meets the host and the driver only at hooks.
 */
export class Approvals {
  #config: ApprovalsConfig
  /** Undecided requests by id, in the order they were asked. */
  readonly #pending = new Map<string, Pending>()
  /** Remembered answers by tree: on the root agent while it lives, else by the root's id. */
  readonly #rememberedByRoot = new WeakMap<Agent, Map<string, Remembered>>()
  readonly #rememberedById = new Map<string, Map<string, Remembered>>()
  readonly #events: Dispatch
  readonly #lookup: (id: string) => Agent | undefined
  readonly #ctx: Context
  readonly #warn: (message: string) => void
  #sectionOff: (() => void) | undefined
  /** The timeout while the config sets none (`setDefaultTimeout`). */
  #defaultTimeout: number | undefined

  constructor(ctx: Context, config: ApprovalsConfig) {
    assertConfig(config)
    this.#ctx = ctx
    this.#config = config ?? defaults
    const agents = rawService(ctx.agents)
    this.#lookup = (id) => agents.get(id)
    const logger = ctx.logger('approvals')
    this.#warn = (message) => logger.warn(message)
    this.#events = new Dispatch(ctx.events, (error, event) => logger.warn(`a "${event}" listener failed: ${redactSecrets(thrownMessage(error))}`))
    updateInPlace<ApprovalsConfig>(ctx, (next) => this.#update(next), assertConfig)
    listenDirect(ctx, 'tools/approve', (exec, subject, next) => this.#judge(exec, subject, next))
    listenDirect(ctx, 'subagent/prepare', (plan) => {
      // served here, from the request or a definition's baseline alike
      if (plan.request.approval !== undefined || baselineApproval(plan) !== undefined) plan.claim('approval')
      const policy = childPolicy(plan)
      if (policy !== undefined) plan.recordHeader('approval', policy)
    })
    this.#syncSection()
    // nothing could decide them any more: each asked call is refused, never left waiting
    ctx.effect(() => () => {
      for (const pending of [...this.#pending.values()]) {
        this.#settle(pending, { approved: false, reason: 'the approvals plugin was unloaded', by: 'cancel' })
      }
    }, 'approvals')
    ctx.provide('approvals', this)
  }

  /**
   * Decides the request `id` (SPEC §11.2): appends `approval/decided` to the asking agent's
   * session, emits `approval/decided`, and lets the call run (approved) or refuses it with
   * `Error: tool call "<name>" was denied: <reason>` (reason default `denied by the user`, code
   * `DENIED`). Throws `approval request "<id>" is not pending` (code `NOT_PENDING`) for an unknown
   * or already decided id, and a `TypeError` for a malformed answer; neither changes anything.
   */
  decide(id: string, answer: ApprovalAnswer): void {
    const checked = readAnswer(answer)
    if (typeof id !== 'string') throw new TypeError('approval request id must be a string')
    const pending = this.#pending.get(id)
    if (!pending) throw new SubagentError('NOT_PENDING', `approval request "${id}" is not pending`)
    const fields: DecisionFields = { approved: checked.approved, by: 'user' }
    const reason = checked.reason ?? (checked.approved ? undefined : text('en-US', 'approvals.reason.user'))
    if (reason !== undefined) fields.reason = reason
    if (checked.remember !== undefined) fields.remember = checked.remember
    this.#settle(pending, fields)
  }

  /**
   * The undecided requests, of the tree rooted at `rootId` or of every tree, in the order they
   * were asked. A new array of frozen requests. Throws a `TypeError` for a `rootId` that is not a string.
   */
  pending(rootId?: string): ApprovalRequest[] {
    if (rootId !== undefined && typeof rootId !== 'string') throw new TypeError('approvals.pending rootId must be a string')
    const found: ApprovalRequest[] = []
    for (const { request } of this.#pending.values()) if (rootId === undefined || request.rootId === rootId) found.push(request)
    return found
  }

  /**
   * Sets the timeout of asked calls while the config sets no `timeout` (a config `timeout` always
   * wins); `undefined` removes it. Undecided requests are re-armed, counted from when they were
   * asked. The CLI sets one when no person can answer at its terminal (SPEC §11.4). Throws a
   * `TypeError` for anything but a positive integer or `undefined`.
   */
  setDefaultTimeout(ms: number | undefined): void {
    if (ms !== undefined && !(Number.isSafeInteger(ms) && ms > 0)) throw new TypeError('approvals default timeout must be a positive integer of ms')
    this.#defaultTimeout = ms
    for (const pending of this.#pending.values()) this.#arm(pending)
  }

  /** The word the policies give a call of `name` by `agent` (the deployment's and the agent's chain). */
  #decisionFor(agent: Agent | undefined, name: string, readOnly: boolean) {
    const deployment = decideByPolicy(this.#config, name, readOnly)
    if (deployment === 'deny' || agent === undefined) return deployment
    return stricter(deployment, chainDecision(agent, name, readOnly))
  }

  /** The `tools/approve` listener: allow, deny, or ask and wait. */
  #judge(exec: ToolExecution, subject: ApprovalSubject, next: () => Promise<ApprovalVerdict>): ApprovalVerdict | Promise<ApprovalVerdict> {
    const name = exec.name
    if (name === STRUCTURED_OUTPUT) return next()
    const agent = exec.agent
    const word = this.#decisionFor(agent, name, subject.readOnly)
    if (word === 'allow') return next()
    if (word === 'deny') return this.#refusal(name, this.#text('approvals.reason.policy'))
    if (agent === undefined) return this.#refusal(name, this.#text('approvals.reason.noAgent'))
    if (this.#config.children === 'deny' && agent.session.header.parentSession !== undefined) {
      return this.#refusal(name, this.#text('approvals.reason.children'))
    }
    const lineage = lineageOf(agent, this.#lookup)
    const remembered = this.#remembered(lineage.rootId, false)?.get(name)
    if (remembered) return remembered.approved ? next() : this.#refusal(name, remembered.reason ?? this.#text('approvals.reason.user'))
    return this.#ask(exec, agent, lineage, subject.readOnly).then((decision) =>
      decision.approved ? next() : this.#refusal(name, decision.reason ?? this.#text('approvals.reason.user')),
    )
  }

  #text(key: string, params?: Record<string, string>): string {
    return text(this.#config.locale ?? 'en-US', key, params)
  }

  #refusal(name: string, reason: string): ApprovalVerdict {
    return { kind: 'deny', reason: this.#text('approvals.denied', { name, reason }), code: 'DENIED' }
  }

  /** Records and emits a request for the call, and resolves with its decision. */
  #ask(exec: ToolExecution, agent: Agent, lineage: Lineage, readOnly: boolean): Promise<ApprovalDecision> {
    const id = flatUuid()
    const label = agent.session.header.label
    const request: ApprovalRequest = Object.freeze({
      id,
      agentId: agent.id,
      rootId: lineage.rootId,
      path: lineage.path,
      depth: lineage.depth,
      ...(label === undefined ? {} : { label }),
      tool: exec.name,
      args: exec.args,
      callId: exec.callId,
      createdAt: Date.now(),
    })
    const { turn, step } = currentStep(agent.session.events)
    const record: RequestedRecord = { turn, step, callId: exec.callId, name: exec.name, arguments: exec.args, requestId: id }
    agent.session.append(REQUESTED_EVENT, record)
    const signal = exec.signal
    return new Promise<ApprovalDecision>((resolve) => {
      const pending: Pending = { request, agent, readOnly, signal, resolve, timer: undefined, onAbort: undefined }
      // listed before `approval/asked` is heard: a listener may decide at once
      this.#pending.set(id, pending)
      if (signal.aborted) {
        this.#settle(pending, { approved: false, reason: 'cancelled', by: 'cancel' })
        return
      }
      pending.onAbort = () => this.#settle(pending, { approved: false, reason: 'cancelled', by: 'cancel' })
      signal.addEventListener('abort', pending.onAbort, { once: true })
      this.#arm(pending)
      if (this.#events.has('approval/asked')) this.#events.emit('approval/asked', [request])
    })
  }

  /** (Re)starts the request's timeout, counted from when it was asked; decides it now when that has passed. */
  #arm(pending: Pending): void {
    if (pending.timer !== undefined) clearTimeout(pending.timer)
    pending.timer = undefined
    const timeout = this.#config.timeout ?? this.#defaultTimeout
    if (timeout === undefined) return
    const expire = () => this.#settle(pending, { approved: false, reason: `no decision within ${timeout} ms`, by: 'timeout' })
    const left = pending.request.createdAt + timeout - Date.now()
    if (left <= 0) expire()
    else pending.timer = setTimeout(expire, left)
  }

  /** Decides a pending request once: records, emits, remembers, lets the call go on. */
  #settle(pending: Pending, fields: DecisionFields): void {
    const { request } = pending
    if (this.#pending.get(request.id) !== pending) return
    this.#pending.delete(request.id)
    if (pending.timer !== undefined) clearTimeout(pending.timer)
    if (pending.onAbort) pending.signal.removeEventListener('abort', pending.onAbort)
    const decision: ApprovalDecision = Object.freeze({ requestId: request.id, ...fields })
    try {
      pending.agent.session.append(DECIDED_EVENT, { ...decision })
    } catch (error) {
      this.#warn(`approval request "${request.id}" was decided but could not be recorded: ${redactSecrets(thrownMessage(error))}`)
    }
    if (fields.remember === 'tree') this.#remembered(request.rootId, true)!.set(request.tool, { approved: fields.approved, reason: fields.reason })
    if (this.#events.has('approval/decided')) this.#events.emit('approval/decided', [request, decision])
    pending.resolve(decision)
    // the same answer for the tree's other calls of that tool already waiting
    if (fields.remember === 'tree') {
      for (const other of [...this.#pending.values()]) {
        if (other.request.rootId !== request.rootId || other.request.tool !== request.tool) continue
        const same: DecisionFields = { approved: fields.approved, by: 'policy' }
        if (fields.reason !== undefined) same.reason = fields.reason
        this.#settle(other, same)
      }
    }
  }

  /** The answers remembered for the tree rooted at `rootId`; made when `create`. */
  #remembered(rootId: string, create: boolean): Map<string, Remembered> | undefined {
    const root = this.#lookup(rootId)
    let answers = root ? this.#rememberedByRoot.get(root) : this.#rememberedById.get(rootId)
    if (!answers && create) {
      answers = new Map()
      if (root) this.#rememberedByRoot.set(root, answers)
      else this.#rememberedById.set(rootId, answers)
    }
    return answers
  }

  #update(config: ApprovalsConfig): void {
    this.#config = config ?? defaults
    this.#syncSection()
    // the new policy applies to every call not yet decided
    for (const pending of [...this.#pending.values()]) this.#rejudge(pending)
  }

  #rejudge(pending: Pending): void {
    const { agent, readOnly, request } = pending
    const word = this.#decisionFor(agent, request.tool, readOnly)
    if (word === 'allow') this.#settle(pending, { approved: true, by: 'policy' })
    else if (word === 'deny') this.#settle(pending, { approved: false, reason: text('en-US', 'approvals.reason.policy'), by: 'policy' })
    else if (this.#config.children === 'deny' && agent.session.header.parentSession !== undefined) {
      this.#settle(pending, { approved: false, reason: text('en-US', 'approvals.reason.children'), by: 'policy' })
    } else this.#arm(pending)
  }

  /** The `delegation-policy` section is added while `children` is `'deny'`, and costs nothing otherwise. */
  #syncSection(): void {
    const wanted = this.#config.children === 'deny'
    if (wanted && !this.#sectionOff) {
      this.#sectionOff = this.#ctx.on('system-prompt/assemble', (assembly: PromptAssembly, { agent }: { agent: Agent }, next: () => PromptAssembly) => {
        if (agent.session.header.parentSession !== undefined) {
          assembly.sections.push({ name: DELEGATION_POLICY_SECTION, order: DELEGATION_POLICY_ORDER, text: this.#text('approvals.delegationPolicy') })
        }
        return next()
      })
    } else if (!wanted && this.#sectionOff) {
      this.#sectionOff()
      this.#sectionOff = undefined
    }
  }
}

export namespace Approvals {
  export const inject = ['agents']
  export type Config = ApprovalsConfig
  export const Config: Schema<Config> = ConfigSchema
}

export default Approvals
