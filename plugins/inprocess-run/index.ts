import type { Context } from 'cordis'
import { Dispatch, rawService } from '../../lib/dispatch.ts'
import { thrownMessage } from '../../lib/errors.ts'
import { forkSeed } from '../../lib/fork-seed.ts'
import { rootIdOf } from '../../lib/lineage.ts'
import type {
  Agent,
  SessionEvent,
  SubagentInfo,
  SubagentPlan,
  SubagentResult,
  SubagentRun,
  SubagentStartOptions,
  SubagentStartRequest,
} from '../../lib/types.ts'
import type { Agents } from '../host/index.ts'
import { applyRequestScope, childHeader, childOptions, needsSetup } from './creation.ts'
import { admit, enter, type StartPlan } from './entry-checks.ts'
import { Run } from './run.ts'

export { abortedBeforePublication, capabilityFields } from './entry-checks.ts'

declare module 'cordis' {
  interface Context {
    inprocessRun: InProcessRun
  }
  interface Events {
    /**
     * Before any child exists. Lower `plan.depthCap`, `plan.claim()` a capability, or throw: a
     * throw rejects the start with that error. Synchronous: a returned promise is not awaited, and
     * its rejection is logged, never unhandled. @mode emit (strict)
     */
    'subagent/prepare'(plan: SubagentPlan): void
    /**
     * In the child's unpublished setup window; awaited in order. Register through `child.ctx`
     * (scoped to the child). A throw or rejection rolls the creation back and rejects the start.
     * @mode serial
     */
    'subagent/setup'(child: Agent, plan: SubagentPlan): void | Promise<void>
    /**
     * The result on its way to `run.result`: return `next()` (possibly edited) or a replacement.
     * A throw rejects `run.result`. @mode waterfall
     */
    'subagent/settle'(
      result: SubagentResult,
      run: SubagentRun,
      next: () => SubagentResult | Promise<SubagentResult>,
    ): SubagentResult | Promise<SubagentResult>
    /** A run was handed to its caller. Observe-only, contained. @mode emit */
    'subagent/start'(info: SubagentInfo): void
    /**
     * A run's result settled, with its stop reason and usage; or its result rejected, with `error`
     * (the message). Every `subagent/start` gets exactly one. Observe-only, contained. @mode emit
     */
    'subagent/end'(info: SubagentInfo): void
  }
}

/**
 * In-process subagents (SPEC §2): `start`, `spawn`, `fork`. Runs belong to their callers: no
 * cordis resource of this plugin is tied to a run, so unloading it never cancels one.
 */
export class InProcessRun {
  // provided as a plain value, not a cordis `Service`: no method needs its caller's context, so
  // callers skip the tracing proxy that a Service pays on every method access
  private readonly dispatch: Dispatch
  private readonly agents: Agents

  constructor(ctx: Context) {
    const logger = ctx.logger('inprocess-run')
    this.dispatch = new Dispatch(ctx.events, (error, event) => {
      logger.warn(`a "${event}" listener failed: ${thrownMessage(error)}`)
    })
    this.agents = rawService(ctx.agents)
    ctx.provide('inprocessRun', this)
  }

  /**
   * Starts one child. Fulfils only after the child is published (`ctx.agents.get(run.id) ===
   * run.agent`); a rejected start leaves no agent, session or registration behind. Entry errors
   * (SPEC §2.1) arrive as rejections.
   */
  start(request: SubagentStartRequest, options?: SubagentStartOptions): Promise<SubagentRun> {
    try {
      const plan = enter(request, options?.seed)
      const dispatch = this.dispatch
      if (dispatch.has('subagent/prepare')) dispatch.emitStrict('subagent/prepare', [plan])
      admit(plan)
      return this.create(plan)
    } catch (error) {
      return Promise.reject(error)
    }
  }

  /** A child with a fresh history. */
  spawn(request: SubagentStartRequest): Promise<SubagentRun> {
    return this.start(request)
  }

  /** A child seeded with the parent's events through its last completed turn. */
  fork(request: SubagentStartRequest): Promise<SubagentRun> {
    const parent = request?.parent
    const events: readonly SessionEvent[] | undefined = parent?.session?.events
    return this.start(request, events ? { seed: forkSeed(events) } : undefined)
  }

  private async create(plan: StartPlan): Promise<SubagentRun> {
    const dispatch = this.dispatch
    const { request } = plan
    const setupListeners = dispatch.has('subagent/setup')
    const handle = await this.agents.create({
      // owned by the parent, exactly as through `parent.ctx.agents.create()`
      owner: request.parent,
      header: childHeader(plan),
      ...(plan.seed ? { seed: plan.seed } : {}),
      agentOptions: childOptions(plan),
      signal: request.signal,
      ...(needsSetup(plan, setupListeners)
        ? {
            setup: async (child: Agent) => {
              applyRequestScope(child, plan)
              if (setupListeners) await dispatch.serial('subagent/setup', [child, plan])
            },
          }
        : {}),
    })
    const agents = this.agents
    return new Run(handle, plan, dispatch, rootIdOf(request.parent, (id) => agents.get(id)))
  }
}

export namespace InProcessRun {
  export const inject = ['agents']
}

export default InProcessRun
