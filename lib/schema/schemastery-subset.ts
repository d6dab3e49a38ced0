/**
 * Converts a schemastery `Schema` (cordis's schema library) into the JSON-Schema subset that
 * structured output accepts (SPEC §3). Pure: no cordis, no I/O.
 */
import type Schema from 'schemastery'
import { UnsupportedSchemaError } from '../errors.ts'
import type { JsonSchema } from '../types.ts'

const SCHEMASTERY_BRAND = Symbol.for('schemastery')

/** Meta keys that only steer schemastery's form rendering: they constrain no value. */
const PRESENTATION_META = new Set(['collapse', 'hidden', 'badges', 'role', 'extra', 'link', 'comment', 'disabled', 'loose'])
/** Meta keys that constrain values, which the subset has no keyword for. */
const CONSTRAINT_META = ['min', 'max', 'pattern'] as const

type ScalarName = 'string' | 'number' | 'boolean' | 'null'

/** True for a schemastery schema from any loaded copy of the library (its global brand). */
export function isSchemastery(value: unknown): value is Schema {
  return typeof value === 'function' && (value as unknown as Record<symbol, unknown>)[SCHEMASTERY_BRAND] === true
}

const converted = new WeakMap<Schema, JsonSchema>()

/**
 * The subset schema that accepts what `schema` describes. Every object property is `required`:
 * schemastery's output type has every key and no defaults are applied to a model's value.
 * Throws `UnsupportedSchemaError` (`unsupported JSON schema: <path>: <violation>; …`) listing every
 * construct the subset cannot express. Memoized by identity: schemastery's builders return new
 * schemas, so a schema is not expected to change after its first use.
 */
export function subsetOfSchemastery(schema: Schema): JsonSchema {
  const known = converted.get(schema)
  if (known) return known
  const violations: string[] = []
  const json = convertNode(schema, '$', violations, new Set())
  if (violations.length > 0) throw new UnsupportedSchemaError(violations)
  converted.set(schema, json)
  return json
}

/**
 * The JSON Schema a requested `outputSchema` stands for: a schemastery schema converted
 * (`subsetOfSchemastery`, which throws), anything else unchanged for the subset check to judge.
 */
export function requestedJsonSchema(schema: unknown): unknown {
  return isSchemastery(schema) ? subsetOfSchemastery(schema) : schema
}

function convertNode(schema: Schema, path: string, violations: string[], ancestors: Set<Schema>): JsonSchema {
  if (ancestors.has(schema)) {
    violations.push(`${path}: recursive schemastery schema`)
    return {}
  }
  ancestors.add(schema)
  try {
    return { ...convertType(schema, path, violations, ancestors), ...annotations(schema, path, violations) }
  } finally {
    ancestors.delete(schema)
  }
}

function convertType(schema: Schema, path: string, violations: string[], ancestors: Set<Schema>): JsonSchema {
  switch (schema.type) {
    case 'any':
      return {}
    case 'string':
    case 'boolean':
      return { type: schema.type }
    case 'number':
      // `.step(1)` (as in `Schema.natural()`) is the only step the subset can say: `integer`
      if (schema.meta.step === undefined) return { type: 'number' }
      if (schema.meta.step === 1) return { type: 'integer' }
      violations.push(`${path}: schemastery "step" ${schema.meta.step} has no equivalent in the subset`)
      return {}
    case 'const':
      return constNode(schema.value, path, violations)
    case 'array':
      return { type: 'array', items: convertNode(schema.inner as Schema, `${path}.items`, violations, ancestors) }
    case 'object':
      return objectNode(schema.dict ?? {}, path, violations, ancestors)
    case 'union':
      return unionNode(schema.list ?? [], path, violations, ancestors)
    default:
      violations.push(`${path}: schemastery "${schema.type}" has no equivalent in the subset`)
      return {}
  }
}

function scalarName(value: unknown): ScalarName | undefined {
  if (value === null) return 'null'
  if (typeof value === 'number') return Number.isFinite(value) ? 'number' : undefined
  if (typeof value === 'string' || typeof value === 'boolean') return typeof value as ScalarName
  return undefined
}

function constNode(value: unknown, path: string, violations: string[]): JsonSchema {
  const type = scalarName(value)
  if (type === undefined) {
    violations.push(`${path}: schemastery "const" of a non-scalar value has no equivalent in the subset`)
    return {}
  }
  return type === 'null' ? { type } : { type, const: value }
}

function objectNode(dict: Record<string, Schema>, path: string, violations: string[], ancestors: Set<Schema>): JsonSchema {
  const properties: Record<string, JsonSchema> = {}
  for (const [key, child] of Object.entries(dict)) {
    properties[key] = convertNode(child, `${path}.properties${propertyPath(key)}`, violations, ancestors)
  }
  const keys = Object.keys(properties)
  return keys.length > 0 ? { type: 'object', properties, required: keys } : { type: 'object' }
}

function propertyPath(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`
}

/** A union of scalar constants of one type is an `enum`; anything else is a `oneOf`. */
function unionNode(list: readonly Schema[], path: string, violations: string[], ancestors: Set<Schema>): JsonSchema {
  if (list.length === 0) {
    violations.push(`${path}: schemastery "union" without branches has no equivalent in the subset`)
    return {}
  }
  if (list.length === 1) return convertNode(list[0] as Schema, path, violations, ancestors)
  const types = new Set(list.map((branch) => (branch.type === 'const' ? scalarName(branch.value) : undefined)))
  const [only] = types
  if (types.size === 1 && only !== undefined && only !== 'null') {
    return { type: only, enum: list.map((branch) => branch.value) }
  }
  return { oneOf: list.map((branch, i) => convertNode(branch, `${path}.oneOf[${i}]`, violations, ancestors)) }
}

/** `description` and `default` carry over as annotations; value constraints are violations. */
function annotations(schema: Schema, path: string, violations: string[]): JsonSchema {
  const meta = schema.meta
  const out: JsonSchema = {}
  for (const key of CONSTRAINT_META) {
    if (meta[key] !== undefined) violations.push(`${path}: schemastery "${key}" has no equivalent in the subset`)
  }
  if (typeof meta.description === 'string') out.description = meta.description
  // schemastery gives every object and array an empty default of its own: not the author's
  if (meta.default !== undefined && !isImplicitDefault(schema.type, meta.default)) out.default = meta.default
  for (const key of Object.keys(meta)) {
    if (key === 'description' || key === 'default' || key === 'required' || key === 'step') continue
    if (PRESENTATION_META.has(key) || (CONSTRAINT_META as readonly string[]).includes(key)) continue
    violations.push(`${path}: schemastery meta "${key}" has no equivalent in the subset`)
  }
  return out
}

function isImplicitDefault(type: string, value: unknown): boolean {
  if (type === 'object') return typeof value === 'object' && value !== null && Object.keys(value).length === 0
  if (type === 'array') return Array.isArray(value) && value.length === 0
  return false
}
