/**
 * The JSON-Schema subset that structured output accepts (SPEC §3), checked without ajv. Pure: no
 * cordis, no I/O. The check is total: any input, including cycles, proxies that throw, functions
 * and very deep or very large values, yields a list of violations instead of an exception.
 */
import { UnsupportedSchemaError } from '../errors.ts'

/** Deepest schema nesting checked (the root is level 1), and deepest nesting of any JSON data in it. */
export const MAX_SCHEMA_DEPTH = 64
/** Most values one check visits: schema nodes (a shared subtree counts once per path) plus data values. */
export const MAX_SCHEMA_VALUES = 200_000

const TYPE_NAMES = ['object', 'array', 'string', 'number', 'integer', 'boolean', 'null'] as const
type TypeName = (typeof TYPE_NAMES)[number]
type ScalarName = Exclude<TypeName, 'object' | 'array'>

/** Keywords that belong to typed nodes, and the type each one needs. */
const TYPED_KEYWORDS: Readonly<Record<string, 'object' | 'array' | 'scalar'>> = {
  properties: 'object',
  required: 'object',
  additionalProperties: 'object',
  items: 'array',
  enum: 'scalar',
  const: 'scalar',
}

const NOT_JSON = 'must be JSON data'
const TOO_DEEP = `nesting deeper than ${MAX_SCHEMA_DEPTH} levels`
const TOO_LARGE = `schema is larger than ${MAX_SCHEMA_VALUES} values`

type Dict = Record<string, unknown>

interface NodeFrame {
  node: unknown
  path: string
  depth: number
}

/** Marks the end of a node's subtree: the node stops being an ancestor. */
interface ExitFrame {
  exit: object
}

interface DataFrame {
  container: object
  children: unknown[]
  index: number
  height: number
}

/** Schema objects already found inside the subset: checking one again costs nothing. */
const supported = new WeakSet<object>()

/**
 * Every violation of the subset as `<path>: <what is wrong>`, paths like `$`, `$.properties.answer`,
 * `$.items`, `$.oneOf[1]`, `$.enum[0]`, `$.properties["a b"]`; pre-order, each node's keywords in
 * key order. Returns `[]` for a supported schema. Never throws. Linear in the schema. A schema
 * object found supported is remembered by identity (the start's check and the validator's compile
 * then walk it once), so, as for validation, a schema must not be mutated after its first use.
 */
export function schemaViolations(schema: unknown): string[] {
  if (typeof schema === 'object' && schema !== null && supported.has(schema)) return []
  const violations = new SubsetCheck().run(schema)
  if (violations.length === 0 && typeof schema === 'object' && schema !== null) supported.add(schema)
  return violations
}

/**
 * Throws `UnsupportedSchemaError` (code `UNSUPPORTED_SCHEMA`, message
 * `unsupported JSON schema: <violation>; <violation>…`) when `schema` is outside the subset.
 */
export function assertSchemaSubset(schema: unknown): void {
  const violations = schemaViolations(schema)
  if (violations.length > 0) throw new UnsupportedSchemaError(violations)
}

class SubsetCheck {
  readonly #violations: string[] = []
  readonly #ancestors = new Set<object>()
  /** Containers already proven to be JSON data, with their nesting height. */
  readonly #verified = new WeakMap<object, number>()
  #visited = 0
  #isExhausted = false

  run(schema: unknown): string[] {
    const stack: (NodeFrame | ExitFrame)[] = [{ node: schema, path: '$', depth: 1 }]
    while (stack.length > 0 && !this.#isExhausted) {
      const frame = stack.pop()!
      if ('exit' in frame) {
        this.#ancestors.delete(frame.exit)
        continue
      }
      if (!this.#spend()) break
      const { node, path, depth } = frame
      if (depth > MAX_SCHEMA_DEPTH) {
        this.#report(path, TOO_DEEP)
        continue
      }
      if (typeof node === 'object' && node !== null && this.#ancestors.has(node)) {
        this.#report(path, 'circular reference')
        continue
      }
      let children: NodeFrame[] = []
      try {
        children = this.#checkNode(node, path, depth)
      } catch {
        // a proxy trap or getter threw: report the node instead of the exception
        this.#report(path, 'could not be read')
      }
      if (typeof node === 'object' && node !== null) {
        this.#ancestors.add(node)
        stack.push({ exit: node })
      }
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!)
    }
    return this.#violations
  }

  #report(path: string, problem: string): void {
    this.#violations.push(`${path}: ${problem}`)
  }

  #spend(): boolean {
    if (this.#isExhausted) return false
    if (++this.#visited <= MAX_SCHEMA_VALUES) return true
    this.#isExhausted = true
    this.#report('$', TOO_LARGE)
    return false
  }

  /** Checks one node's own keywords; returns the child nodes to visit, in document order. */
  #checkNode(node: unknown, path: string, depth: number): NodeFrame[] {
    if (!isPlainObject(node)) {
      this.#report(path, 'must be a schema object')
      return []
    }
    const keys = Object.keys(node)
    const hasType = keys.includes('type')
    const typeName = hasType ? asTypeName(node.type) : undefined
    const kind = hasType ? 'typed' : keys.includes('oneOf') ? 'oneOf' : 'annotation'
    // an invalid `type` gets its own violation; the root rule adds one only when it says something new
    if (depth === 1 && typeName !== 'object' && (!hasType || typeName !== undefined)) {
      this.#report(path, 'root type must be "object"')
    }
    const children: NodeFrame[] = []
    for (const key of keys) {
      if (this.#isExhausted) break
      const value = node[key]
      const at = appendKey(path, key)
      switch (key) {
        case 'type':
          this.#checkType(value, at)
          break
        case 'title':
        case 'description':
          if (typeof value !== 'string') this.#report(at, 'must be a string')
          break
        case 'default':
          this.#checkData(value, at)
          break
        case 'examples':
          this.#checkExamples(value, at)
          break
        case 'oneOf':
          if (kind === 'typed') this.#report(path, 'keyword "oneOf" is not allowed with "type"')
          else this.#checkOneOf(value, at, depth, children)
          break
        default: {
          const needs = Object.hasOwn(TYPED_KEYWORDS, key) ? TYPED_KEYWORDS[key] : undefined
          if (needs === undefined) {
            this.#report(path, `unknown keyword ${quote(key)}`)
          } else if (kind === 'oneOf') {
            this.#report(path, `keyword ${quote(key)} is not allowed with "oneOf"`)
          } else if (kind === 'annotation') {
            this.#report(path, `keyword ${quote(key)} needs ${needs === 'scalar' ? 'a scalar type' : `type ${quote(needs)}`}`)
          } else if (typeName !== undefined && (needs === 'scalar' ? !isScalarName(typeName) : typeName !== needs)) {
            this.#report(path, `keyword ${quote(key)} is not allowed with type ${quote(typeName)}`)
          } else {
            // applicable, or the node's `type` is itself invalid: check the keyword's own shape
            this.#checkTypedKeyword(node, key, at, depth, typeName, children)
          }
        }
      }
    }
    return children
  }

  #checkType(value: unknown, at: string): void {
    if (Array.isArray(value)) this.#report(at, 'must be a single type, not an array')
    else if (typeof value !== 'string') this.#report(at, 'must be a type name')
    else if (asTypeName(value) === undefined) this.#report(at, `unknown type ${quote(value)}`)
  }

  #checkExamples(value: unknown, at: string): void {
    if (!Array.isArray(value)) {
      this.#report(at, 'must be an array of JSON data')
      return
    }
    for (let i = 0; i < value.length && this.#spend(); i++) {
      this.#checkData(i in value ? value[i] : undefined, `${at}[${i}]`)
    }
  }

  #checkOneOf(value: unknown, at: string, depth: number, children: NodeFrame[]): void {
    if (!Array.isArray(value)) {
      this.#report(at, 'must be an array')
      return
    }
    if (value.length < 2) this.#report(at, 'needs at least 2 branches')
    for (let i = 0; i < value.length && this.#spend(); i++) {
      children.push({ node: value[i], path: `${at}[${i}]`, depth: depth + 1 })
    }
  }

  #checkTypedKeyword(
    node: Dict,
    key: string,
    at: string,
    depth: number,
    typeName: TypeName | undefined,
    children: NodeFrame[],
  ): void {
    const value = node[key]
    const scalar = typeName !== undefined && isScalarName(typeName) ? typeName : undefined
    switch (key) {
      case 'properties':
        if (!isPlainObject(value)) {
          this.#report(at, 'must be an object')
          return
        }
        for (const name of Object.keys(value)) {
          children.push({ node: value[name], path: appendKey(at, name), depth: depth + 1 })
        }
        return
      case 'required':
        this.#checkRequired(node, value, at)
        return
      case 'additionalProperties':
        if (typeof value !== 'boolean') this.#report(at, 'must be a boolean')
        return
      case 'items':
        children.push({ node: value, path: at, depth: depth + 1 })
        return
      case 'enum':
        this.#checkEnum(value, at, scalar)
        return
      case 'const':
        this.#checkValue(value, at, scalar)
    }
  }

  #checkEnum(value: unknown, at: string, scalar: ScalarName | undefined): void {
    if (!Array.isArray(value) || value.length === 0) {
      this.#report(at, 'must be a non-empty array')
      return
    }
    // ajv's meta-schema rejects repeated enum values, so the subset does too (scalars compare by ===)
    const seen = new Set<unknown>()
    for (let i = 0; i < value.length && this.#spend(); i++) {
      const item: unknown = i in value ? value[i] : undefined
      if (scalar === undefined) this.#checkData(item, `${at}[${i}]`)
      else if (!matchesScalar(item, scalar)) this.#report(`${at}[${i}]`, SCALAR_PROBLEMS[scalar])
      else if (seen.has(item)) this.#report(`${at}[${i}]`, 'duplicate value')
      seen.add(item)
    }
  }

  #checkRequired(node: Dict, value: unknown, at: string): void {
    if (!Array.isArray(value)) {
      this.#report(at, 'must be an array')
      return
    }
    const properties = Object.hasOwn(node, 'properties') ? node.properties : {}
    // with malformed `properties` the declared names are unknown: that keyword reports on its own
    const declared = isPlainObject(properties) ? new Set(Object.keys(properties)) : undefined
    const seen = new Set<string>()
    for (let i = 0; i < value.length && this.#spend(); i++) {
      const name: unknown = value[i]
      const item = `${at}[${i}]`
      if (typeof name !== 'string') this.#report(item, 'must be a string')
      else if (seen.has(name)) this.#report(item, `duplicate ${quote(name)}`)
      else if (declared !== undefined && !declared.has(name)) this.#report(item, `${quote(name)} is not a declared property`)
      if (typeof name === 'string') seen.add(name)
    }
  }

  /** An `enum` entry or `const`: type-correct for a scalar type, else at least JSON data. */
  #checkValue(value: unknown, at: string, scalar: ScalarName | undefined): void {
    if (scalar === undefined) this.#checkData(value, at)
    else if (!matchesScalar(value, scalar)) this.#report(at, SCALAR_PROBLEMS[scalar])
  }

  #checkData(value: unknown, at: string): void {
    let problem: string | undefined
    try {
      problem = this.#dataProblem(value)
    } catch {
      problem = 'could not be read'
    }
    if (problem !== undefined) this.#report(at, problem)
  }

  /**
   * Why `value` is not JSON data (null, booleans, finite numbers, strings, arrays and plain objects
   * of those, acyclic, at most MAX_SCHEMA_DEPTH deep), or `undefined`. Iterative, so depth cannot
   * overflow the stack; a container proven once is not walked again, so shared subtrees cost once.
   */
  #dataProblem(value: unknown): string | undefined {
    if (typeof value !== 'object' || value === null) return isJsonScalar(value) ? undefined : NOT_JSON
    const stack: DataFrame[] = []
    const onPath = new Set<object>()
    const enter = (container: object): string | undefined => {
      if (stack.length >= MAX_SCHEMA_DEPTH) return TOO_DEEP
      const children = childrenOf(container)
      if (children === undefined) return NOT_JSON
      onPath.add(container)
      stack.push({ container, children, index: 0, height: 1 })
      return undefined
    }
    const known = this.#verified.get(value)
    if (known !== undefined) return known > MAX_SCHEMA_DEPTH ? TOO_DEEP : undefined
    const first = enter(value)
    if (first !== undefined) return first
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!
      if (top.index === top.children.length) {
        stack.pop()
        onPath.delete(top.container)
        this.#verified.set(top.container, top.height)
        const parent = stack[stack.length - 1]
        if (parent !== undefined) parent.height = Math.max(parent.height, top.height + 1)
        continue
      }
      if (!this.#spend()) return undefined
      const child = top.children[top.index++]
      if (typeof child !== 'object' || child === null) {
        if (!isJsonScalar(child)) return NOT_JSON
        continue
      }
      if (onPath.has(child)) return NOT_JSON
      const height = this.#verified.get(child)
      if (height !== undefined) {
        if (stack.length + height > MAX_SCHEMA_DEPTH) return TOO_DEEP
        top.height = Math.max(top.height, height + 1)
        continue
      }
      const problem = enter(child)
      if (problem !== undefined) return problem
    }
    return undefined
  }
}

const SCALAR_PROBLEMS: Readonly<Record<ScalarName, string>> = {
  string: 'must be a string',
  number: 'must be a finite number',
  integer: 'must be an integer',
  boolean: 'must be a boolean',
  null: 'must be null',
}

/** Whether `value` is of the scalar JSON-Schema type `type` (`number` excludes NaN and ±Infinity). */
export function matchesScalar(value: unknown, type: ScalarName): boolean {
  switch (type) {
    case 'string':
      return typeof value === 'string'
    case 'number':
      return typeof value === 'number' && Number.isFinite(value)
    case 'integer':
      return Number.isInteger(value)
    case 'boolean':
      return typeof value === 'boolean'
    case 'null':
      return value === null
  }
}

function asTypeName(value: unknown): TypeName | undefined {
  return TYPE_NAMES.find((name) => name === value)
}

function isScalarName(type: TypeName): type is ScalarName {
  return type !== 'object' && type !== 'array'
}

function isJsonScalar(value: unknown): boolean {
  return value === null || typeof value === 'string' || typeof value === 'boolean' || Number.isFinite(value)
}

/** An object whose prototype is null or a realm's `Object.prototype` (no class instances, no arrays). */
function isPlainObject(value: unknown): value is Dict {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const proto: unknown = Object.getPrototypeOf(value)
  return proto === null || Object.getPrototypeOf(proto) === null
}

/** The values inside a JSON container (holes read as `undefined`), or `undefined` if it is not one. */
function childrenOf(container: object): unknown[] | undefined {
  if (Array.isArray(container)) {
    const children: unknown[] = []
    for (let i = 0; i < container.length; i++) {
      // a hole is `undefined`, which is not JSON data: stop at the first one
      if (!(i in container)) return [undefined]
      children.push(container[i])
    }
    return children
  }
  if (!isPlainObject(container)) return undefined
  return Object.keys(container).map((key) => container[key])
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/

function appendKey(path: string, key: string): string {
  return IDENTIFIER.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`
}

function quote(text: string): string {
  return JSON.stringify(text)
}
