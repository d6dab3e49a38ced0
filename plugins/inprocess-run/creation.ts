/**
 * Creation of the child (SPEC §2.2): header, inherited options and the unpublished setup window.
 */
import type { Events } from 'cordis'
import type { ListenerDispatch } from '../../lib/dispatch.ts'
import { isThenable } from '../../lib/async/thenable.ts'
import type { Agent, AgentOptions, CreateAgentOptions, ToolGuard } from '../../lib/types.ts'
import { expandedToolFilter } from './baseline.ts'
import { recordScope, type ScopeRecord } from './child-scope.ts'
import type { StartPlan } from './entry-checks.ts'

/** Parent's provider, model, maxTokens (each only if set, as the entry read them), then the request's, then the depth. */
export function childOptions(plan: StartPlan): AgentOptions {
  const options: AgentOptions = { ...plan.parent.inherited }
  const overrides = plan.request.agentOptions
  const baseline = plan.baseline?.agentOptions
  if (overrides === undefined && baseline === undefined) {
    options.subagentDepth = plan.childDepth
    return options
  }
  // spread, not Object.assign: an own `__proto__` key (JSON-parsed options) stays a plain key
  // instead of replacing the prototype, so no override is lost. A definition's options come
  // between the parent's and the request's (SPEC §12: the request overrides)
  return { ...options, ...baseline, ...overrides, subagentDepth: plan.childDepth }
}

/** The child's session header: lineage, origin and the durable depth. */
export function childHeader(plan: StartPlan): NonNullable<CreateAgentOptions['header']> {
  const { parent, request } = plan
  const header: NonNullable<CreateAgentOptions['header']> = {
    parentSession: parent.id,
    origin: 'subagent',
    delegationDepth: plan.childDepth,
  }
  if (parent.cwd !== undefined) header.cwd = parent.cwd
  if (plan.seed) header.seedLength = plan.seed.length
  if (request.label !== undefined) header.label = request.label
  if (request.callId !== undefined) header.callId = request.callId
  // fields a plugin recorded (`plan.recordHeader`): the driver carries them, their owners judge them
  const recorded = plan.recordedHeader
  if (recorded !== undefined) {
    if (recorded.agent !== undefined) header.agent = recorded.agent
    if (recorded.approval !== undefined) header.approval = recorded.approval
  }
  return header
}

/** Whether the child needs a setup window at all (a plain spawn does not, and costs no fiber). */
export function needsSetup(plan: StartPlan, hasSetupListeners: boolean): boolean {
  const { request } = plan
  return (
    hasSetupListeners ||
    request.persona !== undefined ||
    request.toolFilter !== undefined ||
    plan.inheritedTools !== undefined ||
    plan.baseline?.persona !== undefined ||
    plan.baseline?.toolFilter !== undefined
  )
}

/**
 * Persona, inherited ceiling and guards, and tool filter, registered through the child's own context so they
 * are scoped to it and vanish with it. Restrictions compose (a tool must pass each), so the filter
 * can only narrow the ceiling. An unknown tool name in the filter throws and so rolls the creation back.
 */
function applyRequestScope(child: Agent, plan: StartPlan, globals: () => readonly string[], persisting: boolean): void {
  const { toolFilter } = plan.request
  const baseline = plan.baseline
  // the request's persona overrides the definition's (SPEC §12)
  const persona = plan.request.persona ?? baseline?.persona
  if (persona !== undefined) child.ctx.systemPrompt.section({ name: 'persona', order: 0, text: persona })
  const inherited = plan.inheritedTools
  let ceiling: string[] | undefined
  if (inherited !== undefined) {
    const tools = child.ctx.tools
    // a tool unregistered since the snapshot is hidden anyway, and must not fail the start
    ceiling = inherited.filter((name) => tools.get(name) !== undefined)
    tools.restrict({ allow: ceiling })
    // the parent's guards meet the child's calls of the tools it inherited: a model never reaches
    // through a child a call it was denied (SPEC §8.3). Each sees the child's execution, as the
    // child's own would. A tool the parent never saw (the child's own, e.g. its structured-output
    // capture tool) is not theirs to judge: an allowlist guard of the parent denied it every call
    const guards = plan.inheritedGuards
    const preExecute = plan.inheritedPreExecute
    if (guards?.length || preExecute?.length) {
      const seen = new Set(inherited)
      if (guards) for (let i = 0; i < guards.length; i++) tools.guard(forInherited(guards[i]!, seen))
      // so do its own `tools/pre-execute` listeners: a deny there refuses a call as a guard does
      if (preExecute) {
        for (let i = 0; i < preExecute.length; i++) child.ctx.on('tools/pre-execute', denyOnly(preExecute[i] as PreExecute, seen))
      }
    }
  }
  // the definition's filter and the request's compose (a tool must pass both): the request only narrows
  const definitionFilter = baseline?.toolFilter !== undefined ? expandedToolFilter(baseline.toolFilter, globals()) : undefined
  if (definitionFilter !== undefined) child.ctx.tools.restrict(definitionFilter)
  if (toolFilter !== undefined) child.ctx.tools.restrict(toolFilter)
  // what a resume must register again (SPEC §14); only a store could read it back
  if (persisting) {
    const record = scopeRecord(persona, ceiling, toolFilter)
    if (definitionFilter !== undefined) record.definitionFilter = definitionFilter
    recordScope(child, record)
  }
}

function scopeRecord(persona: string | undefined, inherited: string[] | undefined, toolFilter: { allow?: readonly string[]; deny?: readonly string[] } | undefined): ScopeRecord {
  const record: ScopeRecord = {}
  if (persona !== undefined) record.persona = persona
  if (inherited !== undefined) record.inherited = inherited
  if (toolFilter !== undefined) {
    record.toolFilter = {}
    if (toolFilter.allow !== undefined) record.toolFilter.allow = [...toolFilter.allow]
    if (toolFilter.deny !== undefined) record.toolFilter.deny = [...toolFilter.deny]
  }
  return record
}

type PreExecute = Events['tools/pre-execute']
type PreExecuteAnswer = ReturnType<PreExecute>
type PreExecuteNext = Parameters<PreExecute>[1]

/** A parent's guard as its child inherits it: it judges only calls of tools in the parent's snapshot. */
function forInherited(guard: ToolGuard, inherited: ReadonlySet<string>): ToolGuard {
  return (exec) => (inherited.has(exec.name) ? guard(exec) : undefined)
}

/**
 * A parent's `tools/pre-execute` listener as its child inherits it: it judges only calls of tools
 * in the parent's snapshot (`inherited`; any other goes to `next()` unseen), and may deny a call,
 * never allow one. Only its `{kind:'deny'}` stands as given; any other answer (`{kind:'allow'}` made
 * without `next()` or after it, and an answer of nothing or without a kind, which the pipeline
 * lets through as an allow) answers what the rest of the child's waterfall answers, so the
 * child's own listeners keep their deny (SPEC §8.3: nothing inherited widens the child).
 */
function denyOnly(listener: PreExecute, inherited: ReadonlySet<string>): PreExecute {
  return (exec, next) => {
    if (!inherited.has(exec.name)) return next()
    let downstream: ReturnType<PreExecuteNext> | undefined
    const once: PreExecuteNext = () => (downstream ??= next())
    const decide = (answer: Awaited<PreExecuteAnswer>): PreExecuteAnswer =>
      (answer as { kind?: unknown } | null | undefined)?.kind === 'deny' ? answer : once()
    const answer = listener(exec, once)
    return isThenable(answer) ? (Promise.resolve(answer).then(decide) as PreExecuteAnswer) : decide(answer as Awaited<PreExecuteAnswer>)
  }
}

/**
 * The `setup` of a child's creation: the request's scope (`applyRequestScope`), then the
 * `subagent/setup` listeners when there are any. Returns a promise only when a listener does: a
 * setup window that only registers (persona, tool filter, structured output) costs the creation
 * no tick. A throw propagates (and rolls the creation back).
 *
 * A function that makes the closure, rather than `options.setup = (child) => …` at the call site:
 * V8 allocates a function literal assigned to a property straight in the old generation, where the
 * dead closure would hold its creator's context (the whole start: plan, request, the run's
 * hand-off) through every scavenge until the next full GC. Made here, the closure is young and
 * holds only these three values.
 */
export function childSetup(
  plan: StartPlan,
  dispatch: ListenerDispatch,
  setupListeners: boolean,
  globals: () => readonly string[],
): (child: Agent) => Promise<void> | undefined {
  return (child) => {
    applyRequestScope(child, plan, globals, dispatch.has('session/load'))
    return setupListeners ? dispatch.serialEager('subagent/setup', [child, plan]) : undefined
  }
}
