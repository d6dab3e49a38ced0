/**
 * `StructuredOutput` (SPEC §3): a child started with `outputSchema` must answer by calling its own
 * `structured_output` tool; the run's result then carries the value as `structured`. It meets the
 * driver only at its hooks: `subagent/prepare`, `subagent/setup`, `subagent/settle`.
 */
import type { Context } from 'cordis'
import Schema from 'schemastery'
import { rawService } from '../host/cordis-bridge.ts'
import { jsonViolations } from '../../lib/json-validation.ts'
import { requestedJsonSchema } from '../../lib/schemastery-subset.ts'
import { assertSchemaSubset } from '../../lib/schema-subset.ts'
import type { Agent, JsonSchema, SubagentInfo } from '../../lib/types.ts'
import { type Locale, localeOption, localizeConfig, text } from '../../locales/index.ts'
import type {} from '../host/index.ts'
import type {} from '../inprocess-run/index.ts'
import { captureTool, STRUCTURED_OUTPUT_ORDER, STRUCTURED_OUTPUT_SECTION } from './capture-tool.ts'
import { adoptRun } from './adoption.ts'
import { captureGuard } from './guard.ts'
import { settleCapture } from './settle.ts'
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
 * Checks a requested schema at the start (SPEC §2.1.6): a schemastery schema is converted first,
 * then the subset (`UnsupportedSchemaError`, `unsupported JSON schema: …`, which also bounds its
 * depth and size), then its validator is compiled once (cached for the tool's validation; linear
 * in the schema, see `lib/subset-validation.ts`).
 */
function assertOutputSchema(schema: unknown): void {
  const json = requestedJsonSchema(schema)
  assertSchemaSubset(json)
  jsonViolations(json as JsonSchema, {})
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
 * Serves `outputSchema` for `ctx.inprocessRun` starts. Children without one are untouched (no
 * context, no registration). Unloading the plugin rejects later `outputSchema` starts and leaves
 * runs already started working.
 */
export function StructuredOutput(ctx: Context, config: StructuredOutput.Config): void {
  const locale = config?.locale ?? 'en-US'
  const agents = rawService(ctx.agents)
  const states = new WeakMap<Agent, CaptureState>()
  const root = ctx.root
  let isActive = true

  ctx.on('subagent/prepare', (plan) => {
    const schema = plan.request.outputSchema
    if (schema !== undefined) plan.claim('outputSchema', () => assertOutputSchema(schema))
  })

  ctx.on('subagent/setup', (child, plan) => {
    const schema = plan.request.outputSchema
    if (schema === undefined) return
    // checked at entry: a schemastery schema's conversion is memoized, so this is a lookup
    const json = requestedJsonSchema(schema) as JsonSchema
    const state = new CaptureState()
    // a child still unpublished at unload is missed by the unload loop below; it is adopted at
    // its first prompt assembly, which comes before any outcome `settle` would change
    installCapture(child, json, state, locale, () => {
      if (!isActive) adoptRun(root, child, state)
    })
    states.set(child, state)
  })

  ctx.on('subagent/settle', (_result, run, next) => {
    const state = states.get(run.agent)
    return state ? settleCapture(state, run, next) : next()
  })

  // a run whose result rejected never went through settle: it must not be adopted at unload
  ctx.on('subagent/end', (info: SubagentInfo) => {
    if (info.stopReason !== undefined) return
    const child = agents.get(info.childId)
    const state = child && states.get(child)
    if (state) state.isSettled = true
  })

  // runs started here keep their contract after the unload: the root's registry settles them
  ctx.effect(() => () => {
    isActive = false
    for (const agent of agents.list()) {
      const state = states.get(agent)
      if (state) adoptRun(root, agent, state)
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
