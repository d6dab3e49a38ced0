/**
 * Finds the keys of a config that its schemastery schema does not declare. schemastery's `object`
 * drops unknown keys without a word, so a typo (`maxdepth` for `maxDepth`) would silently leave
 * the default in force.
 */
import { closestName } from './text/closest-name.ts'

/** The parts of a schemastery schema this check reads (`type`, and `dict` / `list` by type). */
export interface SchemaShape {
  readonly type: string
  readonly dict?: Readonly<Record<string, SchemaShape>>
  readonly list?: readonly SchemaShape[]
}

export interface UnknownKey {
  /** Dotted path of the key, e.g. `limits.stpes`. */
  readonly path: string
  /** Dotted path of the declared key closest to it, when one is close enough to be a likely typo. */
  readonly suggestion?: string
  /** The keys declared at that level, in schema order. */
  readonly known: readonly string[]
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * The declared keys of an `object` schema, or of an `intersect` of objects, each with its schema.
 * `undefined` when the schema's keys cannot be known statically (a union, a dict, `any`, …).
 */
function declaredKeys(schema: SchemaShape): Map<string, SchemaShape> | undefined {
  if (schema.type === 'object') return new Map(Object.entries(schema.dict ?? {}))
  if (schema.type !== 'intersect') return undefined
  const keys = new Map<string, SchemaShape>()
  for (const member of schema.list ?? []) {
    const memberKeys = declaredKeys(member)
    if (!memberKeys) return undefined
    for (const [key, inner] of memberKeys) if (!keys.has(key)) keys.set(key, inner)
  }
  return keys
}

/** The keys a schema declares at its top level, or `undefined` when they are not fixed. */
export function declaredKeyNames(schema: SchemaShape): string[] | undefined {
  const keys = declaredKeys(schema)
  return keys && [...keys.keys()]
}

/**
 * Every key of `value` that `schema` does not declare, depth first, nested objects included.
 * Levels whose keys the schema does not fix (unions, dicts, `any`) are not checked; a value that
 * is not a mapping is left to the schema's own validation.
 */
export function unknownConfigKeys(schema: SchemaShape, value: unknown, prefix = ''): UnknownKey[] {
  const keys = declaredKeys(schema)
  if (!keys || !isMapping(value)) return []
  const known = [...keys.keys()]
  const found: UnknownKey[] = []
  for (const [key, inner] of Object.entries(value)) {
    const path = prefix ? `${prefix}.${key}` : key
    const declared = keys.get(key)
    if (!declared) {
      const closest = closestName(key, known)
      if (closest === undefined) found.push({ path, known })
      else found.push({ path, suggestion: prefix ? `${prefix}.${closest}` : closest, known })
    } else {
      found.push(...unknownConfigKeys(declared, inner, path))
    }
  }
  return found
}
