/**
 * A tool definition's registered form: the checks a definition meets at registration, the frozen
 * bound form the registry keeps (one per unchanged definition object), and what an agent sees of it.
 */
import { thrownMessage } from '../../../lib/errors.ts'
import { compileSchema } from '../../../lib/schema/json-validation.ts'
import type { Agent, JsonSchema, ToolDefinition, ToolSchema } from '../../../lib/types.ts'
import type { ScopedTool } from '../scope.ts'

const toolName = /^[A-Za-z0-9_-]{1,64}$/

function assertDefinition(def: ToolDefinition): void {
  if (typeof def !== 'object' || def === null) throw new TypeError('tool definition must be an object')
  if (typeof def.name !== 'string' || !toolName.test(def.name)) {
    throw new TypeError(`tool name ${JSON.stringify(def.name)} must match ${toolName}`)
  }
  if (typeof def.description !== 'string') {
    throw new TypeError(`tool "${def.name}" description must be a string`)
  }
  const params = def.parameters
  if (typeof params !== 'object' || params === null || Array.isArray(params) || params.type !== 'object') {
    throw new TypeError(`tool "${def.name}" parameters must be an object JSON schema`)
  }
  try {
    // compiles once (cached per schema object), so a schema ajv cannot use fails here, not mid-turn
    compileSchema(params)
  } catch (error) {
    throw new TypeError(`tool "${def.name}" parameters: ${thrownMessage(error)}`)
  }
  if (typeof def.execute !== 'function') throw new TypeError(`tool "${def.name}" execute must be a function`)
  if (def.concurrent !== undefined && typeof def.concurrent !== 'boolean') {
    throw new TypeError(`tool "${def.name}" concurrent must be a boolean`)
  }
  if (def.readOnly !== undefined && typeof def.readOnly !== 'boolean') {
    throw new TypeError(`tool "${def.name}" readOnly must be a boolean`)
  }
  if (def.available !== undefined && typeof def.available !== 'function') {
    throw new TypeError(`tool "${def.name}" available must be a function`)
  }
}

/** A definition's registered form, with the fields it was made from. */
interface Snapshot {
  readonly tool: ScopedTool
  readonly name: string
  readonly description: string
  readonly parameters: JsonSchema
  readonly concurrent: boolean | undefined
  readonly readOnly: boolean | undefined
  readonly execute: ToolDefinition['execute']
  readonly available: ToolDefinition['available']
}

/** The latest registered form of each definition object. */
const snapshots = new WeakMap<ToolDefinition, Snapshot>()

/**
 * The frozen, bound form of `def` as it is now; throws what `assertDefinition` throws. A definition
 * registered again unchanged (one shared definition registered into many agents, e.g. a structured
 * child's capture tool) gets the same one, checked when it was made: no second check and no bound
 * copies per registration. A changed field makes a new one, checked afresh.
 */
export function snapshotOf(def: ToolDefinition): ScopedTool {
  const known = snapshots.get(def)
  if (
    known !== undefined &&
    known.name === def.name &&
    known.description === def.description &&
    known.parameters === def.parameters &&
    // the one part of the schema check not cached by object: a root changed in place fails again
    def.parameters.type === 'object' &&
    known.concurrent === def.concurrent &&
    known.readOnly === def.readOnly &&
    known.execute === def.execute &&
    known.available === def.available
  ) {
    return known.tool
  }
  assertDefinition(def)
  const tool: ScopedTool = Object.freeze({
    name: def.name,
    description: def.description,
    parameters: def.parameters,
    concurrent: def.concurrent === true,
    readOnly: def.readOnly === true,
    execute: def.execute.bind(def) as ScopedTool['execute'],
    ...(def.available ? { available: def.available.bind(def) as ScopedTool['available'] } : {}),
  })
  const { name, description, parameters, concurrent, readOnly, execute, available } = def
  snapshots.set(def, { tool, name, description, parameters, concurrent, readOnly, execute, available })
  return tool
}

export function isConditional(tool: ScopedTool): boolean {
  return tool.available !== undefined
}

/** Asks a conditional tool whether `agent` may see it now; a throw hides it (fails closed). */
export function isAvailable(tool: ScopedTool, agent: Agent | undefined): boolean {
  if (!tool.available || !agent) return true
  try {
    return tool.available(agent) === true
  } catch {
    return false
  }
}


/** The schema an agent is shown for `tool`. */
export function toSchema(tool: ScopedTool): ToolSchema {
  return { name: tool.name, description: tool.description, parameters: tool.parameters }
}
