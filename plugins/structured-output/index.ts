/**
 * `StructuredOutput` (SPEC §3): a child started with `outputSchema` must answer by calling its own
 * `structured_output` tool; the run's result then carries the value as `structured`. It meets the
 * driver only at its hooks: `subagent/prepare`, `subagent/setup`, `subagent/settle`.
 */
import type { Context } from 'cordis'
import Schema from 'schemastery'
import { rawService } from '../../lib/dispatch.ts'
import { jsonViolations } from '../../lib/json-validation.ts'
import { assertSchemaSubset } from '../../lib/schema-subset.ts'
import type { Agent, JsonSchema, SubagentResult, SubagentRun } from '../../lib/types.ts'
import { type Locale, localeOption, localizeConfig, text } from '../../locales/index.ts'
import type {} from '../host/index.ts'
import type {} from '../inprocess-run/index.ts'
import { captureTool, STRUCTURED_OUTPUT_ORDER, STRUCTURED_OUTPUT_SECTION } from './capture-tool.ts'
import { captureGuard } from './guard.ts'
import { CaptureState } from './stage.ts'

export {
  RECORDED_TEXT,
  STRUCTURED_OUTPUT_DESCRIPTION,
  STRUCTURED_OUTPUT_INSTRUCTION,
  STRUCTURED_OUTPUT_ORDER,
  STRUCTURED_OUTPUT_SECTION,
  STRUCTURED_OUTPUT_TOOL,
} from './capture-tool.ts'
export { alreadyRecorded } from './guard.ts'

/**
 * Diagnostic of a run whose child finished cleanly without a committed value. Diagnostics are
 * result data and stay English (`diagnostic.missingCapture`); `SubagentTool` localizes them.
 */
export const MISSING_CAPTURE = text('en-US', 'diagnostic.missingCapture')

/** Diagnostic of a cancelled run whose child finished without a committed value. */
export const CANCELLED_BEFORE_CAPTURE = text('en-US', 'diagnostic.cancelledBeforeCapture')

type Next = () => SubagentResult | Promise<SubagentResult>

/**
 * Checks a requested schema at the start (SPEC §2.1.6): the subset first (`UnsupportedSchemaError`,
 * `unsupported JSON schema: …`), then ajv compiles it once (cached for the tool's validation), so a
 * schema ajv cannot use fails the start instead of the child's first capture.
 */
function assertOutputSchema(schema: unknown): void {
  assertSchemaSubset(schema)
  jsonViolations(schema as JsonSchema, {})
}

/**
 * Registers the child's capture runtime through `child.ctx`, so all of it is scoped to the child,
 * lives in the host's per-agent tables and goes with the child, whatever happens to this plugin.
 * `onAssemble` runs before each of the child's model requests; `locale` picks what the model reads.
 */
function installCapture(child: Agent, schema: JsonSchema, state: CaptureState, locale: Locale, onAssemble: () => void): void {
  const ctx = child.ctx
  // one lookup: each service access through a scope context costs a proxy round trip
  const tools = ctx.tools
  const instruction = text(locale, 'structuredOutput.instruction')
  tools.register(captureTool(schema, state, locale))
  tools.guard(captureGuard(state, locale))
  ctx.on('system-prompt/assemble', (assembly, _info, next) => {
    onAssemble()
    assembly.sections.push({ name: STRUCTURED_OUTPUT_SECTION, order: STRUCTURED_OUTPUT_ORDER, text: instruction })
    return next()
  })
  ctx.on('tools/result', (exec, result) => state.observe(exec, result))
  // ends the turn after the step that committed: no extra model request
  ctx.on('agent/turn-stop', () => state.isCommitted)
}

/**
 * The result with the capture applied: `structured` (a frozen JSON copy) when committed; a clean
 * finish without a commit becomes `error`, or `aborted` when the run was cancelled.
 */
async function settle(state: CaptureState, run: SubagentRun, next: Next): Promise<SubagentResult> {
  state.isSettled = true
  const result = await next()
  if (state.isCommitted) return { ...result, structured: state.value }
  if (result.stopReason !== 'completed') return result
  return run.isCancelled
    ? { ...result, stopReason: 'aborted', diagnostic: CANCELLED_BEFORE_CAPTURE }
    : { ...result, stopReason: 'error', diagnostic: MISSING_CAPTURE }
}

/**
 * After this plugin is unloaded, a live child's own context settles its run, so a run that started
 * under the plugin keeps its contract; the listener goes with the child.
 */
function adopt(child: Agent, state: CaptureState): void {
  if (state.isSettled || state.isAdopted) return
  state.isAdopted = true
  try {
    child.ctx.on('subagent/settle', (_result, run, next) => (run.agent === child ? settle(state, run, next) : next()))
  } catch {
    // the child is already being disposed: its run settles without a result to shape
  }
}

/**
 * Serves `outputSchema` for `ctx.inprocessRun` starts. Children without one are untouched (no
 * context, no registration). Unloading the plugin rejects later `outputSchema` starts and leaves
 * runs already started working.
 */
export function StructuredOutput(ctx: Context, config: StructuredOutput.Config): void {
  const locale = config?.locale ?? 'en-US'
  const agents = rawService(ctx.agents)
  const states = new WeakMap<Agent, CaptureState>()
  let isActive = true

  ctx.on('subagent/prepare', (plan) => {
    const schema = plan.request.outputSchema
    if (schema !== undefined) plan.claim('outputSchema', () => assertOutputSchema(schema))
  })

  ctx.on('subagent/setup', (child, plan) => {
    const schema = plan.request.outputSchema
    if (schema === undefined) return
    const state = new CaptureState()
    // a child still unpublished at unload is missed by the unload loop below; it is adopted at
    // its first prompt assembly, which comes before any outcome `settle` would change
    installCapture(child, schema, state, locale, () => {
      if (!isActive) adopt(child, state)
    })
    states.set(child, state)
  })

  ctx.on('subagent/settle', (_result, run, next) => {
    const state = states.get(run.agent)
    return state ? settle(state, run, next) : next()
  })

  ctx.effect(() => () => {
    isActive = false
    for (const agent of agents.list()) {
      const state = states.get(agent)
      if (state) adopt(agent, state)
    }
  }, 'structured-output runs')
}

export namespace StructuredOutput {
  export const inject = ['inprocessRun', 'agents']
  export interface Config {
    /** Language of the capture tool's description, the instruction and the tool's replies. */
    locale?: Locale
  }
  export const Config: Schema<Config> = localizeConfig(Schema.object({ locale: localeOption() }), 'structuredOutput')
}

export default StructuredOutput
