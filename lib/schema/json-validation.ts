/**
 * JSON-Schema validation of values (SPEC §1.5, §3); frozen JSON copies are `lib/json/frozen-json.ts`.
 * Pure: no cordis, no I/O. A schema inside the SPEC §3 subset is validated by `lib/schema/subset-validation.ts` (linear to
 * compile); any other one by one shared ajv instance. Each schema object is compiled once and its
 * validator cached for the schema's lifetime, so schemas must not be mutated after their first use.
 */
import { createRequire } from 'node:module'
import type { default as Ajv, ErrorObject } from 'ajv'
import { thrownMessage } from '../errors.ts'
import { schemaViolations } from './schema-subset.ts'
import { appendSegment, compileSubset } from './subset-validation.ts'

let sharedAjv: Ajv | undefined

/**
 * The one ajv instance, loaded and built on the first schema outside the SPEC §3 subset: a host
 * whose schemas all fit the subset (the common case) never holds ajv's code and meta-schemas
 * (≈ 1.1 MB of heap).
 */
function ajv(): Ajv {
  if (sharedAjv) return sharedAjv
  const AjvClass: typeof Ajv = createRequire(import.meta.url)('ajv')
  // `ownProperties`: inherited members such as `constructor` never count as present properties.
  // `addUsedSchema: false` plus `removeSchema` below: ajv keeps no schema alive and no `$id` clashes.
  sharedAjv = new AjvClass({ allErrors: true, strict: false, ownProperties: true, addUsedSchema: false })
  return sharedAjv
}

/** Every violation of one compiled schema, in order, possibly with duplicates, in a fresh array per call. */
type Validator = (value: unknown) => string[]

const compiled = new WeakMap<object, Validator>()

type Dict = Record<string, unknown>

/**
 * Every way `value` breaks `schema` (`[]` when valid), deduplicated, paths rooted at `value`
 * (`value.items[2]`, `value["a b"]`): `<path> must have required property "<name>"`,
 * `<path> must NOT have additional property "<name>"`, `<path> must be equal to one of: <json>, …`,
 * `<path> must be equal to constant <json>`, else ajv's text (`<path> must be integer`).
 * Throws `TypeError` `invalid JSON schema: <ajv message>` when ajv cannot compile the schema.
 */
export function jsonViolations(schema: object, value: unknown): string[] {
  const violations = compile(schema)(value)
  // a valid value (nearly every one) or a single violation has nothing to deduplicate
  return violations.length < 2 ? violations : [...new Set(violations)]
}

/**
 * Compiles the validator of `schema` now, so a schema that cannot be used fails here rather than
 * at its first value; cached per schema object like `jsonViolations`. Throws `TypeError`
 * `invalid JSON schema: <ajv message>` as `jsonViolations` does.
 */
export function compileSchema(schema: object): void {
  compile(schema)
}

/**
 * `jsonViolations` as ajv alone words it, whatever the schema, compiled afresh and not cached: the
 * reference the subset validator is tested against. Throws like `jsonViolations`.
 */
export function ajvViolations(schema: object, value: unknown): string[] {
  return [...new Set(compileWithAjv(schema)(value))]
}

/**
 * Violations an `invalid arguments` text lists at most. An array argument of wrong items has one
 * violation per item: listed whole, the text (recorded in the session, sent back to the model) was
 * ≈ 15 times the size of the argument.
 */
export const MAX_LISTED_VIOLATIONS = 20

/**
 * `invalid arguments: <v1>; <v2>` (SPEC §3), for a non-empty list of violations: the first
 * `MAX_LISTED_VIOLATIONS`, then `; … and <n> more` when there are more.
 */
export function formatInvalidArguments(violations: readonly string[]): string {
  const rest = violations.length - MAX_LISTED_VIOLATIONS
  if (rest <= 0) return `invalid arguments: ${violations.join('; ')}`
  return `invalid arguments: ${violations.slice(0, MAX_LISTED_VIOLATIONS).join('; ')}; … and ${rest} more`
}

function compile(schema: object): Validator {
  const cached = compiled.get(schema)
  if (cached !== undefined) return cached
  const validator = schemaViolations(schema).length === 0 ? compileSubset(schema) : compileWithAjv(schema)
  compiled.set(schema, validator)
  return validator
}

function compileWithAjv(schema: object): Validator {
  const instance = ajv()
  let validate: ReturnType<typeof instance.compile>
  try {
    validate = instance.compile(schema)
  } catch (error) {
    // ajv words meta-schema failures as "schema is invalid: …"; our prefix already says so
    const message = thrownMessage(error).replace(/^schema is invalid: /, '')
    throw new TypeError(`invalid JSON schema: ${message}`, { cause: error })
  } finally {
    try {
      instance.removeSchema(schema)
    } catch {
      // a malformed `$id` can make removal throw; the compile outcome is what the caller needs
    }
  }
  if (validate.schemaEnv.$async === true) throw new TypeError('invalid JSON schema: async schemas are not supported')
  return (value) => {
    if (validate(value) === true) return []
    const errors = validate.errors ?? []
    return errors.length > 0 ? errors.map((error) => describe(error, value)) : ['value is invalid']
  }
}

function describe(error: ErrorObject, data: unknown): string {
  const path = renderInstancePath(error.instancePath, data)
  const params: Dict = error.params
  const name = (value: unknown): string => quote(String(value))
  switch (error.keyword) {
    case 'required':
      return `${path} must have required property ${name(params.missingProperty)}`
    case 'additionalProperties':
      if (params.additionalProperty !== undefined) {
        return `${path} must NOT have additional property ${name(params.additionalProperty)}`
      }
      break
    case 'enum':
      if (Array.isArray(params.allowedValues)) {
        return `${path} must be equal to one of: ${params.allowedValues.map(renderJson).join(', ')}`
      }
      break
    case 'const':
      return `${path} must be equal to constant ${renderJson(params.allowedValue)}`
  }
  return `${path} ${error.message ?? `must pass the "${error.keyword}" keyword`}`
}

/** Turns ajv's JSON pointer into `value.a[1]["b c"]`, reading the data to tell indices from keys. */
function renderInstancePath(pointer: string, data: unknown): string {
  let path = 'value'
  if (pointer === '') return path
  let current: unknown = data
  for (const raw of pointer.slice(1).split('/')) {
    const segment = raw.replace(/~1/g, '/').replace(/~0/g, '~')
    if (Array.isArray(current) && /^(0|[1-9][0-9]*)$/.test(segment)) {
      path = appendSegment(path, Number(segment))
      current = current[Number(segment)]
    } else {
      path = appendSegment(path, segment)
      current = isObject(current) && Object.hasOwn(current, segment) ? (current as Dict)[segment] : undefined
    }
  }
  return path
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null
}

function renderJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}

function quote(text: string): string {
  return JSON.stringify(text)
}
