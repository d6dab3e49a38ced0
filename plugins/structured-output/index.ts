/**
 * `StructuredOutput` (SPEC §3): a child started with `outputSchema` must answer by calling its own
 * `structured_output` tool; the run's result then carries the value as `structured`. It meets the
 * driver only at its hooks: `subagent/prepare`, `subagent/setup`, `subagent/settle`.
 */
import type { Context } from 'cordis'
import Schema from 'schemastery'
import { listenDirect, rawService } from '../../cordis-glue/bridge.ts'
import { AgentSlot, listenFor, type Tools } from '../host/index.ts'
import { compileSchema } from '../../lib/schema/json-validation.ts'
import { requestedJsonSchema } from '../../lib/schema/schemastery-subset.ts'
import { assertSchemaSubset } from '../../lib/schema/schema-subset.ts'
import type {
  Agent,
  JsonSchema,
  PromptAssembly,
  SubagentInfo,
  SubagentPlan,
  ToolDefinition,
  ToolExecution,
  ToolGuard,
  ToolResult,
} from '../../lib/types.ts'
import { type Locale, localeOption, localizeConfig } from '../../locales/index.ts'
import type {} from '../host/index.ts'
import type {} from '../inprocess-run/index.ts'
import {
  captureBody,
  captureTexts,
  captureTool,
  STRUCTURED_OUTPUT_ORDER,
  STRUCTURED_OUTPUT_SECTION,
  type StateOf,
} from './capture-tool.ts'
import { adoptRun } from './adoption.ts'
import { captureGuard } from './guard.ts'
import { settleCapture } from './settle.ts'
import { SchemaCache } from './schema-cache.ts'
import { CaptureState } from './stage.ts'

export {
  MAX_VALUE_DEPTH,
  NOT_RECORDED,
  notRecordedAfterFailure,
  notRecordedConcurrently,
  RECORDED_TEXT,
  STRUCTURED_OUTPUT_DESCRIPTION,
  STRUCTURED_OUTPUT_INSTRUCTION,
  STRUCTURED_OUTPUT_ORDER,
  STRUCTURED_OUTPUT_SECTION,
  STRUCTURED_OUTPUT_TOOL,
} from './capture-tool.ts'
export { alreadyRecorded } from './guard.ts'

export { CANCELLED_BEFORE_CAPTURE, MISSING_CAPTURE } from './settle.ts'

/**
 * Registers the child's capture runtime into the child's own tables (the host's `registerFor`,
 * `guardFor` and `listenFor`: what the same registrations through `child.ctx` do, without making
 * the child a context), so all of it is scoped to the child and goes with it, whatever happens to
 * this plugin. Every function registered is shared by all children of one plugin instance (they
 * find the child's state through the agent they are called for): a child costs its
 * registrations, not closures of its own.
 */
function installCapture(child: Agent, definition: ToolDefinition, shared: SharedRuntime): void {
  const { tools } = shared
  tools.registerFor(child, definition)
  tools.guardFor(child, shared.guard)
  listenFor(child, 'system-prompt/assemble', shared.onAssemble)
  listenFor(child, 'tools/result', shared.onResult)
  // ends the turn after the step that committed: no extra model request
  listenFor(child, 'agent/turn-stop', shared.onTurnStop)
}

/** The functions one plugin instance registers into each of its structured children. */
interface SharedRuntime {
  /** The host's tools service itself: registrations name the child, so no caller view is needed. */
  readonly tools: Tools
  readonly guard: ToolGuard
  readonly onAssemble: (assembly: PromptAssembly, info: { agent: Agent }, next: () => PromptAssembly) => PromptAssembly
  readonly onResult: (exec: ToolExecution, result: ToolResult) => void
  readonly onTurnStop: (agent: Agent) => boolean
}

/**
 * The schema a start asks for: the request's, else its definition's (`plan.baseline`, SPEC §12),
 * which claims the capability exactly as a request's does.
 */
function requestedSchema(plan: SubagentPlan): SubagentPlan['request']['outputSchema'] {
  return plan.request.outputSchema ?? plan.baseline?.outputSchema
}

/**
 * Serves `outputSchema` for `ctx.inprocessRun` starts. Children without one are untouched (no
 * context, no registration). Unloading the plugin rejects later `outputSchema` starts and leaves
 * runs already started working.
 */
export function StructuredOutput(ctx: Context, config: StructuredOutput.Config): void {
  const locale = config?.locale ?? 'en-US'
  const texts = captureTexts(locale)
  const agents = rawService(ctx.agents)
  // in each child's scope, not a WeakMap: a weak entry for every short-lived child cost the
  // structured cycle about 1 µs (its set and the scavenges that trace it)
  const states = new AgentSlot<CaptureState>()
  const stateOf: StateOf = (agent) => states.get(agent)
  const root = ctx.root
  let isActive = true

  const execute = captureBody(stateOf, texts)
  // checks a requested schema at the start (SPEC §2.1.6): the subset (`UnsupportedSchemaError`,
  // `unsupported JSON schema: …`, which also bounds its depth and size), then compiles its
  // validator once per distinct schema (linear in the schema, see `lib/schema/subset-validation.ts`)
  // per start, from its entry check to its setup
  const checked = new WeakMap<SubagentPlan, ToolDefinition>()
  const schemas = new SchemaCache<ToolDefinition>(assertSchemaSubset, (schema) => {
    compileSchema(schema)
    return captureTool(schema, execute, texts)
  })

  const shared: SharedRuntime = {
    tools: rawService(ctx.tools),
    guard: captureGuard(stateOf, locale),
    onAssemble: (assembly, info, next) => {
      // a child still unpublished at unload is missed by the unload loop below; it is adopted at
      // its first prompt assembly, which comes before any outcome `settle` would change (looked up
      // only then: the instance is active for nearly every assembly)
      if (!isActive) {
        const state = states.get(info.agent)
        if (state !== undefined) adoptRun(root, info.agent, state)
      }
      assembly.sections.push({ name: STRUCTURED_OUTPUT_SECTION, order: STRUCTURED_OUTPUT_ORDER, text: texts.instruction })
      return next()
    },
    onResult: (exec, result) => stateOf(exec.agent)?.observe(exec, result),
    onTurnStop: (agent) => states.get(agent)?.isCommitted === true,
  }

  // on every start, structured or not: `listenDirect` spares each call cordis's listener wrapper,
  // which traces every argument through a proxy of its reflect service (≈ 0.45 µs and ≈ 0.4 KB a
  // call); no argument of these hooks is a cordis service, so the wrapper had nothing to trace
  listenDirect(ctx, 'subagent/prepare', (plan) => {
    const schema = requestedSchema(plan)
    // a schemastery schema is converted first (memoized per schema object)
    if (schema !== undefined) {
      plan.claim('outputSchema', () => {
        const json = requestedJsonSchema(schema) as JsonSchema
        const definition = schemas.entry(json).value
        // a fixed schema (the request's frozen snapshot copy) is found again at setup as it was
        // here; any other may change meanwhile, so the definition it was checked as is kept
        if (!schemas.isFixed(json)) checked.set(plan, definition)
      })
    }
  })

  listenDirect(ctx, 'subagent/setup', (child, plan) => {
    const schema = requestedSchema(plan)
    if (schema === undefined) return
    // the definition this start's entry check chose, even if the caller changed its object since
    // and a later start was checked against the change (a start can wait in TreeBudget's queue);
    // a start checked by an instance unloaded since is checked again here, as its object is now
    let definition = checked.get(plan)
    if (definition === undefined) definition = schemas.entry(requestedJsonSchema(schema) as JsonSchema).value
    else checked.delete(plan)
    states.set(child, new CaptureState())
    installCapture(child, definition, shared)
  })

  listenDirect(ctx, 'subagent/settle', (_result, run, next) => {
    const state = states.get(run.agent)
    return state ? settleCapture(state, run, next) : next()
  })

  // a run whose result rejected never went through settle: it must not be adopted at unload
  listenDirect(ctx, 'subagent/end', (info: SubagentInfo) => {
    if (info.stopReason !== undefined) return
    const child = agents.get(info.childId)
    const state = child && states.get(child)
    if (state) state.isSettled = true
  })

  // runs started here keep their contract after the unload: the root's registry settles them
  ctx.effect(() => () => {
    isActive = false
    schemas.clear()
    for (const agent of agents.list()) {
      const state = states.get(agent)
      if (state) adoptRun(root, agent, state)
    }
  }, 'structured-output runs')
}

export namespace StructuredOutput {
  export const inject = ['inprocessRun', 'agents', 'tools']
  export interface Config {
    /** Language of the capture tool's description, the instruction and the tool's replies. */
    locale?: Locale
  }
  export const Config: Schema<Config> = localizeConfig(Schema.object({ locale: localeOption() }), 'structuredOutput')
}

export default StructuredOutput
