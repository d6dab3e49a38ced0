/**
 * The inspector's side of approvals (SPEC §11.4): the requests waiting for a decision, as the
 * page shows them, and the decisions the page posts, handed to `ctx.approvals`. The plugin
 * attaches the service while an `Approvals` plugin is loaded; without it nothing is pending and
 * every decision is refused.
 */
import { EventEmitter } from 'node:events'
import { SubagentError } from '../../lib/errors.ts'
import type { ApprovalDecision, ApprovalRequest } from '../approvals/index.ts'

/** A decision as the page posts it (§11.2's `decide` argument). */
export interface DeskDecision {
  approved: boolean
  reason?: string
  remember?: 'tree'
}

/** The part of `ctx.approvals` the desk uses. */
export interface DeskService {
  pending(rootId?: string): readonly ApprovalRequest[]
  decide(id: string, decision: DeskDecision): unknown
}

/** Sent to the page when a request is decided, by whoever decided it. */
export interface DecidedView {
  id: string
  approved: boolean
  reason?: string
  remember?: 'tree'
  by: string
}

/** The text a decision gets when no `Approvals` plugin is loaded (the same words as §11.2's). */
export const notPendingMessage = (id: string) => `approval request "${id}" is not pending`

/** Emits `asked` for every new request and `decided` for every decided one, while attached. */
export class ApprovalDesk extends EventEmitter<{ asked: [request: ApprovalRequest]; decided: [view: DecidedView] }> {
  #service: DeskService | undefined

  /** Decisions go to `service` from now on; returns the function that detaches it. */
  attach(service: DeskService): () => void {
    this.#service = service
    return () => {
      if (this.#service === service) this.#service = undefined
    }
  }

  /** The undecided requests, in the order they were asked (none while detached). */
  pending(): readonly ApprovalRequest[] {
    return this.#service?.pending() ?? []
  }

  /** Decides request `id`. Throws `approval request "<id>" is not pending` (the service's error, or ours when detached: code `NOT_PENDING`). */
  async decide(id: string, decision: DeskDecision): Promise<void> {
    if (!this.#service) throw new SubagentError('NOT_PENDING', notPendingMessage(id))
    await this.#service.decide(id, decision)
  }

  asked(request: ApprovalRequest): void {
    this.emit('asked', request)
  }

  decided(request: ApprovalRequest, decision: ApprovalDecision): void {
    const view: DecidedView = { id: request.id, approved: decision.approved, by: decision.by }
    if (decision.reason !== undefined) view.reason = decision.reason
    if (decision.remember !== undefined) view.remember = decision.remember
    this.emit('decided', view)
  }
}
