/**
 * Validation of values against a schema inside the SPEC §3 subset, without ajv. ajv generates and
 * parses code for every schema, which grows faster than the schema (60,000 properties blocked the
 * event loop for 11 s); here compiling is one linear walk over the schema and validating one walk
 * over the value, bounded by the schema's depth. Violations are worded and ordered as ajv words
 * and orders them (allErrors, ownProperties), so callers cannot tell the two apart. Pure: no
 * cordis, no I/O.
 */
import { matchesScalar } from './schema-subset.ts'
import type { JsonValue } from '../types.ts'

type Dict = Record<string, unknown>

type TypeName = 'object' | 'array' | 'string' | 'number' | 'integer' | 'boolean' | 'null'

/** One compiled schema node. */
type Node =
  | { readonly kind: 'any' }
  | { readonly kind: 'oneOf'; readonly branches: readonly Node[] }
  | {
      readonly kind: 'object'
      readonly properties: ReadonlyMap<string, Node>
      /** The declared properties whose schema constrains something, in schema order. */
      readonly checked: readonly Property[]
      readonly required: readonly string[]
      readonly isClosed: boolean
    }
  | { readonly kind: 'array'; readonly items: Node | undefined }
  | {
      readonly kind: 'scalar'
      readonly type: Exclude<TypeName, 'object' | 'array'>
      readonly constant: { readonly value: JsonValue } | undefined
      readonly allowed: readonly JsonValue[] | undefined
    }

type ScalarNode = Extract<Node, { kind: 'scalar' }>

/** A declared property: its node and its path segment (`.a`, `["a b"]`), made once at compile time. */
interface Property {
  readonly name: string
  readonly node: Node
  readonly segment: string
}

/** A raw violation: where (`value.a[1]`) and what (`must be string`). */
export type SubsetValidator = (value: unknown) => string[]

const ANY: Node = { kind: 'any' }

/**
 * Compiles `schema`, which must already have passed `schemaViolations` (the caller's contract:
 * anything else is undefined behaviour). Returns a validator giving every violation as
 * `<path> <message>` in ajv's order (duplicates included; callers deduplicate). Linear in the
 * schema (a shared subtree is compiled once).
 */
export function compileSubset(schema: object): SubsetValidator {
  const compiled = new Map<object, Node>()
  const compileNode = (source: Dict): Node => {
    let node = compiled.get(source)
    if (node === undefined) {
      node = buildNode(source, compileNode)
      compiled.set(source, node)
    }
    return node
  }
  const root = compileNode(schema as Dict)
  return (value) => {
    const out: string[] = []
    validate(root, value, 'value', out)
    return out
  }
}

function buildNode(source: Dict, compileNode: (source: Dict) => Node): Node {
  if (Object.hasOwn(source, 'oneOf')) return { kind: 'oneOf', branches: (source.oneOf as Dict[]).map(compileNode) }
  if (!Object.hasOwn(source, 'type')) return ANY
  const type = source.type as TypeName
  if (type === 'object') {
    const properties = new Map<string, Node>()
    const checked: Property[] = []
    if (Object.hasOwn(source, 'properties')) {
      const declared = source.properties as Dict
      for (const name of Object.keys(declared)) {
        const node = compileNode(declared[name] as Dict)
        properties.set(name, node)
        if (node.kind !== 'any') checked.push({ name, node, segment: appendSegment('', name) })
      }
    }
    return {
      kind: 'object',
      properties,
      checked,
      required: Object.hasOwn(source, 'required') ? (source.required as string[]) : [],
      isClosed: source.additionalProperties === false,
    }
  }
  if (type === 'array') return { kind: 'array', items: Object.hasOwn(source, 'items') ? compileNode(source.items as Dict) : undefined }
  return {
    kind: 'scalar',
    type,
    constant: Object.hasOwn(source, 'const') ? { value: source.const as JsonValue } : undefined,
    allowed: Object.hasOwn(source, 'enum') ? (source.enum as JsonValue[]) : undefined,
  }
}

// ajv checks a scalar's type before its other keywords, and `const` before `enum`; an object's
// `required`, then `additionalProperties` (data order), then `properties` (schema order)
function validate(node: Node, value: unknown, path: string, out: string[]): void {
  switch (node.kind) {
    case 'any':
      return
    case 'oneOf': {
      const before = out.length
      let passing = 0
      for (const branch of node.branches) {
        const errors = out.length
        validate(branch, value, path, out)
        // like ajv, a second passing branch settles it: later branches are not evaluated
        if (out.length === errors && ++passing === 2) break
      }
      if (passing === 1) out.length = before
      else out.push(`${path} must match exactly one schema in oneOf`)
      return
    }
    case 'object': {
      if (!isObject(value)) {
        out.push(`${path} must be object`)
        return
      }
      for (const name of node.required) {
        if (!Object.hasOwn(value, name)) out.push(`${path} must have required property ${JSON.stringify(name)}`)
      }
      if (node.isClosed) {
        // `for…in` walks the keys without the array `Object.keys` makes; an inherited key is skipped
        for (const key in value) {
          if (Object.hasOwn(value, key) && !node.properties.has(key)) out.push(`${path} must NOT have additional property ${JSON.stringify(key)}`)
        }
      }
      const checked = node.checked
      for (let i = 0; i < checked.length; i++) {
        const { name, node: child, segment } = checked[i]!
        if (!Object.hasOwn(value, name)) continue
        if (child.kind === 'scalar') validateScalar(child, value[name], path, segment, out)
        else validate(child, value[name], path + segment, out)
      }
      return
    }
    case 'array': {
      if (!Array.isArray(value)) {
        out.push(`${path} must be array`)
        return
      }
      const items = node.items
      if (items === undefined || items.kind === 'any') return
      for (let i = 0; i < value.length; i++) {
        if (items.kind === 'scalar') validateScalar(items, value[i], path, i, out)
        else validate(items, value[i], `${path}[${i}]`, out)
      }
      return
    }
    case 'scalar':
      validateScalar(node, value, path, '', out)
      return
  }
}

/**
 * `validate` for a scalar node at `path` + `segment` (an index stands for `[i]`): the path of a
 * value that passes (nearly every one) is never built.
 */
function validateScalar(node: ScalarNode, value: unknown, path: string, segment: string | number, out: string[]): void {
  const typeFails = !matchesScalar(value, node.type)
  const constantFails = node.constant !== undefined && value !== node.constant.value
  const enumFails = node.allowed !== undefined && !node.allowed.includes(value as JsonValue)
  if (!typeFails && !constantFails && !enumFails) return
  const at = typeof segment === 'number' ? `${path}[${segment}]` : path + segment
  if (typeFails) out.push(`${at} must be ${node.type}`)
  if (constantFails) out.push(`${at} must be equal to constant ${JSON.stringify(node.constant!.value)}`)
  if (enumFails) out.push(`${at} must be equal to one of: ${node.allowed!.map((item) => JSON.stringify(item)).join(', ')}`)
}

function isObject(value: unknown): value is Dict {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/

/** `value.a`, `value["a b"]`: the path format of every violation. */
export function appendSegment(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`
  return IDENTIFIER.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`
}
