import type { Context } from 'cordis'
import { Dispatch, rawService } from '../../cordis-glue/bridge.ts'
import { type AbortSubscription, subscribe, unsubscribe } from '../../lib/async/abort-signal.ts'
import { parentDepth } from '../../lib/delegation/depth.ts'
import { SubagentError, thrownMessage } from '../../lib/errors.ts'
import { rootIdOf } from '../../lib/delegation/lineage.ts'
import { redactSecrets } from '../../lib/text/redact.ts'
import type { OutputSchema, StructuredOf } from '../../lib/schema/structured-type.ts'
import type {
  Agent,
  DelegationOutlook,
  JsonSchema,
  ResumedTree,
  ResumedTreeInfo,
  SessionEvent,
  SubagentCatalogEntry,
  SubagentInfo,
  SubagentPlan,
  SubagentResult,
  SubagentRun,
  SubagentStartOptions,
  SubagentStartRequest,
} from '../../lib/types.ts'
import type { Agents, CreateOptions } from '../host/index.ts'
import { childHeader, childOptions, childSetup, needsSetup } from './creation.ts'
import { abortedBeforePublication, type EntryHost, enter, FORK, readStartSeed, type StartPlan } from './entry-checks.ts'
import { Outlook } from './outlook.ts'
import { handOff } from './handoff.ts'
import { resumeTree } from './resume-tree.ts'
import { type EventFeed, Run } from './run.ts'

export { abortedBeforePublication, capabilityFields } from './entry-checks.ts'

declare module 'cordis' {
  interface Context {
    inprocessRun: InProcessRun
  }
  interface Events {
    /**
     * Before any child exists. Lower the cap with `plan.capDepth(n)` (it can only lower; a value
     * that is not a non-negative safe integer throws), `plan.claim()` a capability, or throw: a
     * throw rejects the start with that error. Synchronous: a returned promise is not awaited, and
     * its rejection is logged, never unhandled. @mode emit (strict)
     */
    'subagent/prepare'(plan: SubagentPlan): void
    /**
     * After the entry's shape and depth checks, before `subagent/prepare`: a listener that serves
     * `request.agent` (`AgentDefinitions`) sets the child's baseline with `plan.setBaseline(…)`
     * (SPEC §12), or throws to reject the start. Synchronous, like `subagent/prepare`.
     * @mode emit (strict)
     */
    'subagent/define'(plan: SubagentPlan): void
    /**
     * Asked by `inprocessRun.catalog()`: a plugin that serves `request.agent` pushes the
     * definitions a start may name. Synchronous; a throw is contained and logged. @mode emit
     */
    'subagent/catalog'(entries: SubagentCatalogEntry[]): void
    /**
     * Emitted (on the root) by a plugin whose definitions changed, so what is offered to models
     * (the `subagent` tool's `agent` parameter) is read again. Observe-only, contained. @mode emit
     */
    'subagent/catalog-changed'(): void
    /**
     * In the child's unpublished setup window; awaited in order. Register through `child.ctx`
     * (scoped to the child). A throw or rejection rolls the creation back and rejects the start.
     * @mode serial
     */
    'subagent/setup'(child: Agent, plan: SubagentPlan): void | Promise<void>
    /**
     * After the entry checks, before creation: a listener may wait (a concurrency queue) and then
     * charge what the start costs, or throw to reject it (nothing is created). Awaited in order;
     * a signal aborted meanwhile rejects the start at once with `subagent request was aborted
     * before child publication`, even while a listener that ignores the signal still waits. What
     * it books for the run it hands over with `plan.hold(ticket)`: the driver calls
     * `ticket.settled()` once as the run's result settles (see `RunTicket`).
     * @mode serial
     */
    'subagent/admit'(plan: SubagentPlan): void | Promise<void>
    /**
     * A start rejected after `subagent/admit` began (a listener threw, or creation failed): give
     * back what admitting charged. Every listener hears it, whether or not it admitted the plan;
     * for a start the signal cut short while a listener waited, once that listener is done.
     * Observe-only, contained. @mode emit
     */
    'subagent/abandon'(plan: SubagentPlan, error: unknown): void
    /**
     * What `agent` could delegate now (SPEC §9): lower the cap with `outlook.capDepth(n)` (it can
     * only lower), report the budget left and the limit that blocks a start. Synchronous; asked each time a listing needs it. A throw
     * is contained and logged. @mode emit
     */
    'subagent/outlook'(outlook: DelegationOutlook): void
    /**
     * The result on its way to `run.result`: return `next()` (possibly edited) or a replacement.
     * `next()` always returns a promise (the inner listeners start a microtask later, so the stack
     * stays flat whatever the number of listeners). A throw rejects `run.result`. @mode waterfall
     */
    'subagent/settle'(
      result: SubagentResult,
      run: SubagentRun,
      next: () => SubagentResult | Promise<SubagentResult>,
    ): SubagentResult | Promise<SubagentResult>
    /**
     * A whole tree was published again by `resumeTree` (SPEC §14), every open turn closed: plugins
     * rebuild what they keep per tree (a budget's counts, background deliveries). Synchronous;
     * observe-only, contained. @mode emit
     */
    'subagent/resumed'(tree: ResumedTreeInfo): void
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
  private readonly entryHost: EntryHost
  private readonly feed: EventFeed
  /** The live agent with an id: one function for every start, not a closure each. */
  private readonly lookup: (id: string) => Agent | undefined
  /** Every global tool's name now: a definition's tool prefixes are expanded against them at start. */
  private readonly globalTools: () => readonly string[]
  private readonly root: Context
  /** Trees being resumed now, by root id. */
  private readonly resuming = new Set<string>()

  constructor(ctx: Context) {
    const logger = ctx.logger('inprocess-run')
    this.dispatch = new Dispatch(ctx.events, (error, event) => {
      logger.warn(`a "${event}" listener failed: ${redactSecrets(thrownMessage(error))}`)
    })
    this.agents = rawService(ctx.agents)
    this.entryHost = { dispatch: this.dispatch, tools: rawService(ctx.tools) }
    // on the root: an iteration belongs to its run's caller and outlives an unload of this plugin
    const root = ctx.root
    const agents = this.agents
    this.feed = {
      watch: (listener) => root.on('session/event', listener),
      sessionOf: (id) => agents.get(id)?.session,
    }
    this.lookup = (id) => agents.get(id)
    const tools = this.entryHost.tools
    this.globalTools = () => tools.visibleGlobals()
    this.root = root
    ctx.provide('inprocessRun', this)
  }

  /**
   * Starts one child. Fulfils only after the child is published (`ctx.agents.get(run.id) ===
   * run.agent`); a rejected start leaves no agent, session or registration behind. Entry errors
   * (SPEC §2.1) arrive as rejections. `result.structured` is typed from `request.outputSchema`
   * (a schemastery schema or a literal JSON Schema); the validation at capture backs the type.
   */
  start<const S extends OutputSchema = JsonSchema>(
    request: SubagentStartRequest<S>,
    options?: SubagentStartOptions,
  ): Promise<SubagentRun<StructuredOf<S>>> {
    let seed: readonly SessionEvent[] | undefined
    try {
      seed = readStartSeed(options)
    } catch (error) {
      return Promise.reject(error)
    }
    // the type rests on StructuredOutput: only a value valid against the schema is committed
    return this.#start(request, seed) as Promise<SubagentRun<StructuredOf<S>>>
  }

  /** A child with a fresh history. */
  spawn<const S extends OutputSchema = JsonSchema>(request: SubagentStartRequest<S>): Promise<SubagentRun<StructuredOf<S>>> {
    return this.start(request)
  }

  /** A child seeded with the parent's events through its last completed turn. */
  fork<const S extends OutputSchema = JsonSchema>(request: SubagentStartRequest<S>): Promise<SubagentRun<StructuredOf<S>>> {
    return this.#start(request, FORK) as Promise<SubagentRun<StructuredOf<S>>>
  }

  /** One start, top to bottom: the entry (read once, checked, prepared), admission, creation. */
  #start(request: SubagentStartRequest, seed: readonly SessionEvent[] | typeof FORK | undefined): Promise<SubagentRun> {
    let plan: StartPlan
    try {
      plan = enter(request, seed, this.entryHost)
    } catch (error) {
      return Promise.reject(error)
    }
    return this.dispatch.has('subagent/admit') ? this.createAfterAdmitHook(plan) : this.create(plan)
  }

  /**
   * Publishes a stored tree again (SPEC §14): the root (owned by the host, as a created agent the
   * caller disposes) and every stored descendant found through `parentSession` that was not
   * disposed, each owned by its parent, with the headers and agent options saved. A last turn
   * without `turn/end` is closed first: the streamed text as an interrupted message, undecided
   * approval requests decided `{approved: false, reason: 'interrupted', by: 'resume'}`, each tool
   * call without a result given `Error: interrupted before the tool returned`, then
   * `turn/end {kind: 'interrupted'}` — no tool runs because of a resume. Then `subagent/resumed`.
   * Rejects, with nothing published, with `tree <rootId> is already running in this process` when
   * an agent of the tree is published here (or being resumed), `tree <rootId> was disposed and
   * cannot be resumed`, a store's error, or a refusal of the root's creation (a lease).
   */
  resumeTree(rootId: string): Promise<ResumedTree> {
    return resumeTree(rootId, { agents: this.agents, dispatch: this.dispatch, root: this.root, resuming: this.resuming })
  }

  /**
   * What `agent` could delegate now: its depth, the depth cap and the budget left, as the loaded
   * policies (`subagent/outlook` listeners) report them; `undefined` when no policy listens.
   * `canStart` is false when a child would exceed the cap or a policy reports a blocking limit.
   */
  outlook(agent: Agent): DelegationOutlook | undefined {
    const dispatch = this.dispatch
    if (!dispatch.has('subagent/outlook')) return undefined
    let depth: number
    try {
      depth = parentDepth(agent.session.header.delegationDepth, agent.options.subagentDepth)
    } catch {
      // an agent whose depth cannot be read cannot start a child either (the start would throw)
      return undefined
    }
    const outlook = new Outlook(agent, depth)
    dispatch.emit('subagent/outlook', [outlook])
    return outlook
  }

  /**
   * The definitions a start may name as `request.agent` now, sorted by name, as the loaded plugins
   * (`subagent/catalog` listeners) report them; `[]` while none does.
   */
  catalog(): SubagentCatalogEntry[] {
    const entries: SubagentCatalogEntry[] = []
    if (this.dispatch.has('subagent/catalog')) this.dispatch.emit('subagent/catalog', [entries])
    return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  }

  /**
   * Admission without a tick when every `subagent/admit` listener answers at once (a budget with
   * a free slot); a listener that returns a promise (a start waiting in line) is awaited.
   */
  private createAfterAdmitHook(plan: StartPlan): Promise<SubagentRun> {
    let waiting: Promise<void> | undefined
    try {
      waiting = this.dispatch.serialEager('subagent/admit', [plan])
      if (!waiting) assertNotAborted(plan)
    } catch (error) {
      this.abandon(plan, error)
      return Promise.reject(error)
    }
    return waiting ? this.createAfter(waiting, plan) : this.create(plan, true)
  }

  /**
   * Creates the child once the admit listeners answered. An abort of the plan's signal rejects at
   * once, even while a listener that ignores the signal is still waiting; `subagent/abandon` then
   * comes when that listener is done, so what it booked late is given back too.
   */
  private async createAfter(waiting: Promise<void>, plan: StartPlan): Promise<SubagentRun> {
    let answer: void | typeof ABORTED
    try {
      answer = await admittedUnlessAborted(waiting, plan.signal)
    } catch (error) {
      this.abandon(plan, error)
      throw error
    }
    if (answer === ABORTED) {
      const error = abortedBeforePublicationError(plan)
      const abandon = () => this.abandon(plan, error)
      waiting.then(abandon, abandon)
      throw error
    }
    return this.create(plan, true)
  }

  /** Gives back what admitting `plan` charged: its start was rejected after `subagent/admit` began. */
  private abandon(plan: StartPlan, error: unknown): void {
    if (this.dispatch.has('subagent/abandon')) this.dispatch.emit('subagent/abandon', [plan, error])
  }

  private async create(plan: StartPlan, admitted = false): Promise<SubagentRun> {
    const dispatch = this.dispatch
    const parent = plan.parent.agent
    const setupListeners = dispatch.has('subagent/setup')
    try {
      // optional fields are added to the literal, not spread in: a spread of `cond ? {…} : {}`
      // costs an object on every start
      const options: CreateOptions = {
        // owned by the parent, exactly as through `parent.ctx.agents.create()`
        owner: parent,
        sessionId: plan.childId,
        header: childHeader(plan),
        agentOptions: childOptions(plan),
        signal: plan.signal,
      }
      if (plan.seed) options.seed = plan.seed
      if (needsSetup(plan, setupListeners)) {
        // not a function literal written into `options.setup`: V8 would allocate it in the old
        // generation (see `childSetup`)
        options.setup = childSetup(plan, dispatch, setupListeners, this.globalTools)
      }
      const handle = await this.agents.create(options)
      const rootId = rootIdOf(parent, this.lookup)
      // what admission booked is given back on the run's own settle path, without a hook hop
      const ticket = plan.ticket()
      return new Run(handle, rootId, plan.request.execution, this.feed, (run) => handOff(run, plan.request.prompt, plan.signal, dispatch, ticket))
    } catch (error) {
      if (admitted) this.abandon(plan, error)
      throw error
    }
  }
}

/** What a start whose signal aborted before its child was published rejects with (SPEC §2.1 step 2's text). */
function abortedBeforePublicationError(plan: StartPlan): SubagentError {
  return new SubagentError('ABORTED', abortedBeforePublication, { cause: plan.signal.reason })
}

/** A signal aborted while the start was admitted rejects it as an abort before publication. */
function assertNotAborted(plan: StartPlan): void {
  if (plan.signal.aborted) throw abortedBeforePublicationError(plan)
}

const ABORTED = Symbol('aborted')

/**
 * What `waiting` (the admit listeners' answer) settles with, or `ABORTED` as soon as `signal`
 * aborts, whichever comes first. Starts waiting on one signal share its one abort listener
 * (`subscribe`), and none stays once `waiting` settles.
 */
function admittedUnlessAborted(waiting: Promise<void>, signal: AbortSignal): Promise<void | typeof ABORTED> {
  if (signal.aborted) return Promise.resolve(ABORTED)
  return new Promise((resolve, reject) => {
    const subscription: AbortSubscription = { onAbort: () => resolve(ABORTED) }
    subscribe(signal, subscription)
    waiting.then(
      () => {
        unsubscribe(signal, subscription)
        resolve()
      },
      (error: unknown) => {
        unsubscribe(signal, subscription)
        reject(error)
      },
    )
  })
}

export namespace InProcessRun {
  export const inject = ['agents', 'tools']
}

export default InProcessRun
