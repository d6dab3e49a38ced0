import type { Context } from 'cordis'
import { AgentDisposedError, SubagentError, thrownMessage } from '../../../lib/errors.ts'
import { SmallMap } from '../../../lib/small-map.ts'
import type {
  Agent,
  ApprovalSubject,
  ApprovalVerdict,
  ExecuteRequest,
  PreExecuteDecision,
  JsonSchema,
  ToolCallBlock,
  ToolDefinition,
  ToolExecution,
  ToolGuard,
  ToolResult,
  ToolSchema,
} from '../../../lib/types.ts'
import { openScopeOf } from '../agent-tables.ts'
import { HostService } from '../host-service.ts'
import { type AgentScope, type HookDispatcher, installScoped, type ScopedTool, scopeOf } from '../scope.ts'
import { isAvailable, isConditional, snapshotOf, toSchema } from './definition.ts'
import type { SignalSource } from '../turn-signal.ts'
import { errorResult, type PipelineContext, runRequest, runTurnCall } from './pipeline.ts'
import { addGuard, assertFilter, assertGuard, isRestricted, noGuards } from './restrictions.ts'

declare module 'cordis' {
  interface Context {
    tools: Tools
  }
  interface Events {
    /**
     * Before a tool body runs. Return `next()` (always a promise of the inner decision) to defer
     * to inner listeners, or a decision. A deny
     * becomes the error result `Error: <reason>` (code `TOOL_DENIED`); a throw becomes an error
     * result (code `HOOK_FAILED`). Guards run after this and cannot be overridden. @mode waterfall
     */
    'tools/pre-execute'(
      exec: ToolExecution,
      next: () => Promise<PreExecuteDecision>,
    ): PreExecuteDecision | Promise<PreExecuteDecision>
    /**
     * After a tool body ran; may replace the result (e.g. turn success into an error). `next()`
     * always returns a promise of the inner listeners' result. A throw
     * becomes an error result (code `HOOK_FAILED`). @mode waterfall
     */
    'tools/post-execute'(
      exec: ToolExecution,
      result: ToolResult,
      next: () => Promise<ToolResult>,
    ): ToolResult | Promise<ToolResult>
    /**
     * The approval point (SPEC §11.2): after the `tools/pre-execute` waterfall, the guards and the
     * argument check (a call they refuse never gets here), before the body. Return `next()` (a
     * promise of the inner listeners' verdict) or a verdict; a listener may wait (a person
     * deciding), and the call waits with it. A deny becomes the error result `Error: <reason>`
     * with its `code` (default `TOOL_DENIED`); a throw becomes an error result (code
     * `HOOK_FAILED`): a failing approver never lets a call through. @mode waterfall
     */
    'tools/approve'(
      exec: ToolExecution,
      tool: ApprovalSubject,
      next: () => Promise<ApprovalVerdict>,
    ): ApprovalVerdict | Promise<ApprovalVerdict>
    /** The authoritative final outcome of one execution. Observe-only, contained. @mode emit */
    'tools/result'(exec: ToolExecution, result: ToolResult): void
  }
}

/** What is wrong with an `execute` request, as `<field> must be …`, or `undefined`. */
/**
 * The request as `execute` uses it: each field read once into a plain copy, so a getter cannot show
 * the check one value and the pipeline another. Throws `TypeError` `tool execute request <problem>`.
 */
function readExecuteRequest(request: unknown): ExecuteRequest {
  if (typeof request !== 'object' || request === null) throw executeRequestError('must be an object')
  const read = (key: keyof ExecuteRequest): unknown => {
    try {
      return (request as Record<string, unknown>)[key]
    } catch (error) {
      throw executeRequestError(`${key} could not be read: ${thrownMessage(error)}`, error)
    }
  }
  const name = read('name')
  if (typeof name !== 'string') throw executeRequestError('name must be a string')
  const copy: ExecuteRequest = { name, arguments: read('arguments') }
  const callId = read('callId')
  if (callId !== undefined && typeof callId !== 'string') throw executeRequestError('callId must be a string')
  const agent = read('agent')
  if (agent !== undefined && (typeof agent !== 'object' || agent === null)) throw executeRequestError('agent must be an agent')
  const parent = read('parent')
  if (parent !== undefined && typeof parent !== 'symbol') throw executeRequestError('parent must be an execution token (a symbol)')
  const signal = read('signal')
  if (signal !== undefined && !(signal instanceof AbortSignal)) throw executeRequestError('signal must be an AbortSignal')
  if (callId !== undefined) copy.callId = callId
  if (agent !== undefined) copy.agent = agent as Agent
  if (parent !== undefined) copy.parent = parent
  if (signal !== undefined) copy.signal = signal
  return copy
}

function executeRequestError(problem: string, cause?: unknown): TypeError {
  return new TypeError(`tool execute request ${problem}`, cause === undefined ? undefined : { cause })
}

function disposedResult(agentId: string): ToolResult {
  const error = new AgentDisposedError(agentId)
  return errorResult(error.message, error.code)
}

/**
 * Tool registry and execution pipeline (SPEC §1.5). Registrations through an agent's context are
 * scoped to that agent and shadow global tools of the same name for it.
 */
export class Tools extends HostService {
  // cordis calls service methods through a tracing proxy, where #private fields cannot be read
  private readonly globals = new Map<string, ScopedTool>()
  private readonly globalGuards: ToolGuard[] = []
  private globalVersion = 0
  /**
   * Global tools that have `available`: while 0, a listing asks only for an agent with a
   * conditional tool of its own (found in its table, so a scope cleared with its agent leaves no
   * count behind: counted here, such tools stayed counted after their agent was disposed).
   */
  private conditionalGlobals = 0
  private globalSchemas?: readonly ToolSchema[]
  private readonly scopedSchemas = new WeakMap<AgentScope, { key: string; schemas: readonly ToolSchema[] }>()
  /**
   * Listings of the global tools plus one scoped tool, keyed by that tool's parameter schema: every
   * scope whose only own tool has the same schema (each structured child's capture tool) shares one,
   * instead of building and caching its own.
   */
  private readonly oneToolSchemas = new WeakMap<JsonSchema, OneToolListing>()

  constructor(ctx: Context, dispatcher: HookDispatcher) {
    super(ctx, 'tools', dispatcher)
  }

  /**
   * Registers a tool for the calling context's lifetime. Throws `TypeError` for a malformed
   * definition and `tool "<name>" is already registered` (code `DUPLICATE_TOOL`) for a name taken
   * in the same scope.
   */
  register(def: ToolDefinition): () => void {
    const tool = snapshotOf(def)
    return installScoped(this.ctx, `ctx.tools.register(${def.name})`, (scope) => this.addTool(scope, tool))
  }

  /**
   * Registers `def` for `agent` alone, for the agent's lifetime: `agent.ctx.tools.register(def)`
   * without the agent's context or a remover (for a driver plugin equipping a child it made).
   * Throws what `register` throws, a `TypeError` for an agent this host did not make and
   * `AgentDisposedError` for a disposed one.
   */
  registerFor(agent: Agent, def: ToolDefinition): void {
    const tool = snapshotOf(def)
    // no remover: the registration goes with the agent's tables
    this.enterTool(openScopeOf(agent), tool)
  }

  /** Enters `tool` into the scope's table (the global one without a scope); returns its remover. */
  private addTool(scope: AgentScope | undefined, tool: ScopedTool): () => void {
    const table = this.enterTool(scope, tool)
    // the registered form may be shared by registrations of one definition: a stale disposer
    // cannot remove a later one, as `installScoped` runs each disposer once
    return () => {
      if (table.get(tool.name) !== tool) return
      table.delete(tool.name)
      if (tool.available && !scope) this.conditionalGlobals--
      this.touch(scope)
    }
  }

  /** Enters `tool` into the scope's table (the global one without a scope) and returns that table. */
  private enterTool(scope: AgentScope | undefined, tool: ScopedTool): SmallMap<string, ScopedTool> | Map<string, ScopedTool> {
    const table = scope ? (scope.tools ??= new SmallMap()) : this.globals
    if (table.has(tool.name)) {
      throw new SubagentError('DUPLICATE_TOOL', `tool "${tool.name}" is already registered`)
    }
    table.set(tool.name, tool)
    if (tool.available && !scope) this.conditionalGlobals++
    this.touch(scope)
    return table
  }

  /**
   * Hides global tools from the calling agent (schemas, lookup, execution, Code Mode bindings).
   * Only on an agent context. Throws `unknown global tool "<name>"` for a name no global tool has.
   */
  restrict(filter: { allow?: readonly string[]; deny?: readonly string[] }): () => void {
    const own = scopeOf(this.ctx)
    if (!own) throw new TypeError('tools.restrict() is only available on an agent context')
    assertFilter(filter)
    const names = [...(filter.allow ?? []), ...(filter.deny ?? [])]
    for (const name of names) {
      if (!this.globals.has(name)) throw new SubagentError('UNKNOWN_TOOL', `unknown global tool "${name}"`)
    }
    const restriction = {
      allow: filter.allow ? new Set(filter.allow) : undefined,
      deny: filter.deny ? new Set(filter.deny) : undefined,
    }
    return installScoped(this.ctx, 'ctx.tools.restrict()', () => {
      const list = (own.restrictions ??= [])
      list.push(restriction)
      this.touch(own)
      return () => {
        const index = list.indexOf(restriction)
        if (index >= 0) list.splice(index, 1)
        this.touch(own)
      }
    })
  }

  /** Adds a guard: a returned string denies the call with that reason. Runs after pre-execute. */
  guard(fn: ToolGuard): () => void {
    assertGuard(fn)
    return installScoped(this.ctx, 'ctx.tools.guard()', (scope) => {
      const list = scope ? addGuard(scope, fn) : this.globalGuards
      if (!scope) list.push(fn)
      return () => {
        const index = list.indexOf(fn)
        if (index >= 0) list.splice(index, 1)
      }
    })
  }

  /**
   * Adds a guard for `agent` alone, for the agent's lifetime: `agent.ctx.tools.guard(fn)` without
   * the agent's context or a remover. Throws what `guard` throws, a `TypeError` for an agent this
   * host did not make and `AgentDisposedError` for a disposed one.
   */
  guardFor(agent: Agent, fn: ToolGuard): void {
    assertGuard(fn)
    addGuard(openScopeOf(agent), fn)
  }

  /**
   * The guards registered through `agent`'s own context, in registration order, as a new array: a
   * snapshot (the global guards, which meet every call anyway, are not in it). An empty frozen
   * array for an agent with none, or for something that is not an agent of this host.
   */
  guardsOf(agent: Agent): readonly ToolGuard[] {
    const guards = scopeOf(agent)?.guards
    // most parents have none: every `subagent` start asks, so no array for them
    return guards?.length ? guards.slice() : noGuards
  }

  /** The schemas the agent (or a tool-less caller) sees, sorted by name. Frozen; do not mutate. */
  schemas(agent?: Agent): readonly ToolSchema[] {
    const listed = this.listed(agent)
    if (!agent) return listed
    return this.conditionalGlobals || scopeOf(agent)?.tools?.someValue(isConditional) ? this.available(listed, agent) : listed
  }

  /** `schemas` without the tools whose `available` says no, asked now; the same list when none does. */
  private available(schemas: readonly ToolSchema[], agent: Agent): readonly ToolSchema[] {
    const scope = scopeOf(agent)
    let kept: ToolSchema[] | undefined
    for (let i = 0; i < schemas.length; i++) {
      const tool = this.resolve(schemas[i].name, scope)
      const visible = !tool || isAvailable(tool, agent)
      if (!visible && !kept) kept = schemas.slice(0, i)
      else if (visible && kept) kept.push(schemas[i])
    }
    return kept ? Object.freeze(kept) : schemas
  }

  private listed(agent: Agent | undefined): readonly ToolSchema[] {
    const scope = scopeOf(agent)
    if (!scope?.tools?.size && !scope?.restrictions?.length) return this.globalList()
    const only = scope.restrictions?.length ? undefined : scope.tools?.only()
    if (only) return this.withOneTool(only)
    const key = `${this.globalVersion}:${scope.toolsVersion}`
    const cached = this.scopedSchemas.get(scope)
    if (cached?.key === key) return cached.schemas
    const names = new Set<string>(scope.tools?.keys())
    for (const name of this.globals.keys()) names.add(name)
    const schemas: ToolSchema[] = []
    for (const name of [...names].sort()) {
      const tool = this.resolve(name, scope)
      if (tool) schemas.push(toSchema(tool))
    }
    const frozen = Object.freeze(schemas)
    this.scopedSchemas.set(scope, { key, schemas: frozen })
    return frozen
  }

  /** The global listing with `tool` in its place by name (shadowing a global of that name); shared. */
  private withOneTool(tool: ScopedTool): readonly ToolSchema[] {
    const cached = this.oneToolSchemas.get(tool.parameters)
    if (cached?.globalVersion === this.globalVersion && cached.name === tool.name && cached.description === tool.description) {
      return cached.schemas
    }
    const own = toSchema(tool)
    const schemas: ToolSchema[] = []
    let placed = false
    // the global list is sorted by name already: a merge, in the same order `listed` sorts in
    for (const global of this.globalList()) {
      if (global.name === own.name) continue
      if (!placed && own.name < global.name) {
        schemas.push(own)
        placed = true
      }
      schemas.push(global)
    }
    if (!placed) schemas.push(own)
    const frozen = Object.freeze(schemas)
    this.oneToolSchemas.set(tool.parameters, { globalVersion: this.globalVersion, name: tool.name, description: tool.description, schemas: frozen })
    return frozen
  }

  /** The schema of the tool `name` as the agent sees it, or `undefined`. */
  get(name: string, agent?: Agent): ToolSchema | undefined {
    const tool = this.resolve(name, scopeOf(agent))
    return tool && isAvailable(tool, agent) ? toSchema(tool) : undefined
  }

  /**
   * Names of the global tools the agent sees after its restrictions (its own scoped tools left out,
   * even where they shadow a global one), sorted. Without an agent: every global tool.
   */
  visibleGlobals(agent?: Agent): string[] {
    const scope = scopeOf(agent)
    const names: string[] = []
    for (const name of this.globals.keys()) if (!isRestricted(name, scope)) names.push(name)
    return names.sort()
  }

  /**
   * True when the tool `name`, as the agent sees it, may run beside its neighbours in one step
   * (`ToolDefinition.concurrent`); false for an unknown or hidden tool.
   */
  isConcurrent(name: string, agent?: Agent): boolean {
    return this.resolve(name, scopeOf(agent))?.concurrent === true
  }

  /**
   * Runs one call through the pipeline. Never rejects for a tool's own failure: see `ToolResult`.
   * Rejects with a `TypeError` naming the field for a malformed request. A disposed agent's call is
   * refused with `agent "<id>" is disposed` (code `AGENT_DISPOSED`) and meets no hook.
   */
  execute(caller: ExecuteRequest): Promise<ToolResult> {
    let request: ExecuteRequest
    try {
      request = readExecuteRequest(caller)
    } catch (error) {
      return Promise.reject(error)
    }
    const scope = scopeOf(request.agent)
    // its restrictions and guards went with the scope: running anything now would bypass them
    if (scope?.isDisposed) return Promise.resolve(disposedResult(scope.agent.id))
    return runRequest(request, this.pipelineFor(request.name, scope, request.agent))
  }

  /**
   * `execute` for one call of `agent`'s turn (the agent loop's step 5): the call block comes from
   * the model's checked response, so no request is made or checked for it, and the execution
   * reads `source.signal` only when the tool asks for its signal. Same outcomes as `execute`,
   * answered with the result itself when the call met no promise on its way: no `tools/pre-execute`
   * or `tools/approve` listener, a body that returned its result at once, no `tools/post-execute`
   * listener (`tools/result` has then been emitted before this returns).
   */
  executeTurnCall(call: ToolCallBlock, agent: Agent, source: SignalSource): ToolResult | Promise<ToolResult> {
    const scope = scopeOf(agent)
    if (scope?.isDisposed) return Promise.resolve(disposedResult(scope.agent.id))
    return runTurnCall(call, agent, source, this.pipelineFor(call.name, scope, agent))
  }

  /** What a call of the tool `name` for `agent` runs against: the tool as the agent sees it now, and its guards. */
  private pipelineFor(name: string, scope: AgentScope | undefined, agent: Agent | undefined): PipelineContext {
    const tool = this.resolve(name, scope)
    return {
      tool: tool && isAvailable(tool, agent) ? tool : undefined,
      scope,
      dispatcher: this.dispatcher,
      guards: this.guardsFor(scope),
    }
  }

  /** The guards that apply to one agent's calls, global ones first. */
  private guardsFor(scope: AgentScope | undefined): readonly ToolGuard[] {
    if (!scope?.guards?.length) return this.globalGuards
    return this.globalGuards.length ? this.globalGuards.concat(scope.guards) : scope.guards
  }

  private resolve(name: string, scope: AgentScope | undefined): ScopedTool | undefined {
    const own = scope?.tools?.get(name)
    if (own) return own
    const global = this.globals.get(name)
    return global && !isRestricted(name, scope) ? global : undefined
  }

  private globalList(): readonly ToolSchema[] {
    if (this.globalSchemas) return this.globalSchemas
    const names = [...this.globals.keys()].sort()
    return (this.globalSchemas = Object.freeze(names.map((name) => toSchema(this.globals.get(name)!))))
  }

  private touch(scope: AgentScope | undefined): void {
    if (scope) {
      scope.toolsVersion++
    } else {
      this.globalVersion++
      this.globalSchemas = undefined
    }
  }
}

interface OneToolListing {
  readonly globalVersion: number
  readonly name: string
  readonly description: string
  readonly schemas: readonly ToolSchema[]
}
