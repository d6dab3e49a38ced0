/**
 * Property tests for the schema subset and JSON validation. Invariants:
 * (a) every schema built from the SPEC §3 grammar passes `schemaViolations`;
 * (b) one invalidating mutation at any node yields a violation that names that node's path;
 * (c) `jsonViolations` is empty exactly when ajv, configured alike, accepts the value (with
 *     `__proto__` names renamed for ajv, which ignores them in `properties`).
 */
import Ajv from 'ajv'
import { expect } from 'chai'
import fc from 'fast-check'
import { ajvViolations, jsonViolations } from '../../../lib/schema/json-validation.ts'
import { schemaViolations } from '../../../lib/schema/schema-subset.ts'

type Dict = Record<string, unknown>
type Scalar = 'string' | 'number' | 'integer' | 'boolean' | 'null'

const NUM_RUNS = 150
/** Fewer runs where each one compiles two ajv validators (about 10 ms each). */
const NUM_COMPILING_RUNS = 100

/** Builds an object with own data properties only, so a `__proto__` name never sets a prototype. */
function build(entries: [string, unknown][]): Dict {
  const object: Dict = {}
  for (const [key, value] of entries) {
    if (value !== undefined) Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true })
  }
  return object
}

/** A deep copy of JSON data that keeps `__proto__` keys as own keys. */
function clone<T>(value: T): T {
  if (Array.isArray(value)) return value.map(clone) as T
  if (typeof value !== 'object' || value === null) return value
  return build(Object.entries(value).map(([key, child]) => [key, clone(child)])) as T
}

const propertyName = fc.oneof(
  fc.constantFrom('answer', 'items', '__proto__', 'constructor', 'toString', 'a b', '', '0', 'x/y~z'),
  fc.string({ maxLength: 6 }),
)

const jsonData = fc.jsonValue({ maxDepth: 2 })

const scalarValue: Record<Scalar, fc.Arbitrary<unknown>> = {
  string: fc.string({ maxLength: 5 }),
  number: fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }),
  integer: fc.integer({ min: -100, max: 100 }),
  boolean: fc.boolean(),
  null: fc.constant(null),
}

const annotations = fc.record(
  {
    title: fc.string({ maxLength: 5 }),
    description: fc.string({ maxLength: 5 }),
    default: jsonData,
    examples: fc.array(jsonData, { maxLength: 2 }),
  },
  { requiredKeys: [] },
)

function withAnnotations(entries: [string, unknown][], extra: Dict): Dict {
  return build([...entries, ...Object.entries(extra)])
}

const scalarNode = fc
  .constantFrom<Scalar>('string', 'number', 'integer', 'boolean', 'null')
  .chain((type) =>
    fc
      .tuple(
        fc.option(fc.uniqueArray(scalarValue[type], { minLength: 1, maxLength: 3, comparator: 'SameValueZero' }), {
          nil: undefined,
        }),
        fc.option(scalarValue[type], { nil: undefined }),
        annotations,
      )
      .map(([values, constant, extra]) =>
        withAnnotations(
          [
            ['type', type],
            ['enum', values],
            ['const', constant],
          ],
          extra,
        ),
      ),
  )

function objectNode(node: fc.Arbitrary<unknown>): fc.Arbitrary<Dict> {
  return fc
    .tuple(
      fc.option(fc.uniqueArray(fc.tuple(propertyName, node), { selector: ([name]) => name, maxLength: 3 }), {
        nil: undefined,
      }),
      fc.option(fc.boolean(), { nil: undefined }),
      annotations,
    )
    .chain(([properties, additional, extra]) =>
      fc.subarray((properties ?? []).map(([name]) => name)).map((required) =>
        withAnnotations(
          [
            ['type', 'object'],
            ['properties', properties && build(properties)],
            ['required', properties && required],
            ['additionalProperties', additional],
          ],
          extra,
        ),
      ),
    )
}

const { root: validSchema } = fc.letrec<{ node: unknown; root: Dict }>((tie) => ({
  node: fc.oneof(
    { maxDepth: 3, depthIdentifier: 'schema' },
    scalarNode,
    annotations.map((extra) => build(Object.entries(extra))),
    fc
      .tuple(fc.option(tie('node'), { nil: undefined }), annotations)
      .map(([items, extra]) =>
        withAnnotations(
          [
            ['type', 'array'],
            ['items', items],
          ],
          extra,
        ),
      ),
    objectNode(tie('node')),
    fc
      .tuple(fc.array(tie('node'), { minLength: 2, maxLength: 3 }), annotations)
      .map(([branches, extra]) => withAnnotations([['oneOf', branches]], extra)),
  ),
  root: objectNode(tie('node')),
}))

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/

function appendKey(path: string, key: string): string {
  return IDENTIFIER.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`
}

interface Located {
  path: string
  node: Dict
  /** Replaces this node inside its parent (or the root holder). */
  replace(next: unknown): void
}

/** Every node of a valid schema with the path schemaViolations would give it. */
function locate(holder: { root: Dict }): Located[] {
  const found: Located[] = []
  const visit = (node: Dict, path: string, replace: (next: unknown) => void): void => {
    found.push({ path, node, replace })
    const properties = node.properties as Dict | undefined
    if (properties) {
      for (const name of Object.keys(properties)) {
        visit(properties[name] as Dict, appendKey(`${path}.properties`, name), (next) => {
          Object.defineProperty(properties, name, { value: next })
        })
      }
    }
    if (node.items) {
      visit(node.items as Dict, `${path}.items`, (next) => {
        node.items = next
      })
    }
    const branches = (node.oneOf ?? []) as unknown[]
    for (let i = 0; i < branches.length; i++) {
      visit(branches[i] as Dict, `${path}.oneOf[${i}]`, (next) => {
        branches[i] = next
      })
    }
  }
  visit(holder.root, '$', (next) => (holder.root = next as Dict))
  return found
}

function set(node: Dict, key: string, value: unknown): void {
  Object.defineProperty(node, key, { value, enumerable: true, writable: true, configurable: true })
}

const WRONG_CONST: Record<string, unknown> = { string: 1, number: 'x', integer: 1.5, boolean: null, null: false }

/** Mutations that each make any node of a valid schema invalid, at that node's path. */
const mutations: [string, (target: Located) => void][] = [
  ['adds an unknown keyword', (t) => set(t.node, 'pattern', '^x')],
  ['adds $ref', (t) => set(t.node, '$ref', '#/definitions/x')],
  ['makes the type an array', (t) => set(t.node, 'type', [typeof t.node.type === 'string' ? t.node.type : 'string', 'null'])],
  ['sets an unknown type', (t) => set(t.node, 'type', 'date')],
  ['empties the enum', (t) => set(t.node, 'enum', [])],
  ['sets a const of the wrong type', (t) => set(t.node, 'const', WRONG_CONST[String(t.node.type)] ?? 1)],
  ['requires an undeclared property', (t) => set(t.node, 'required', ['\u0000undeclared'])],
  ['gives a non-string title', (t) => set(t.node, 'title', 42)],
  ['gives a function default', (t) => set(t.node, 'default', () => 1)],
  ['gives undefined examples', (t) => set(t.node, 'examples', [undefined])],
  ['wraps the node in a one-branch oneOf', (t) => t.replace({ oneOf: [t.node] })],
  ['replaces the node with a number', (t) => t.replace(42)],
  ['replaces the node with a boolean schema', (t) => t.replace(true)],
  ['turns a oneOf into a single branch or adds one', (t) => set(t.node, 'oneOf', [{}])],
]

function namesPath(violation: string, path: string): boolean {
  return violation.startsWith(path) && /^[:.[]/.test(violation.slice(path.length))
}

/** Values shaped by a schema, so that a fair share of them are valid. */
function valueFor(schema: unknown): fc.Arbitrary<unknown> {
  const node = schema as Dict
  if (Array.isArray(node.oneOf)) return fc.oneof(...node.oneOf.map(valueFor))
  switch (node.type) {
    case 'object': {
      const properties = (node.properties ?? {}) as Dict
      const required = new Set((node.required ?? []) as string[])
      const entries = Object.keys(properties).map((name) =>
        fc.tuple(fc.constant(name), required.has(name) ? valueFor(properties[name]) : fc.option(valueFor(properties[name]), { nil: undefined })),
      )
      return fc
        .tuple(fc.tuple(...entries), fc.option(fc.tuple(propertyName, jsonData), { nil: undefined, freq: 4 }))
        .map(([pairs, extra]) => build(extra ? [...pairs, extra] : pairs))
    }
    case 'array':
      return fc.array(node.items ? valueFor(node.items) : jsonData, { maxLength: 3 })
    case 'string':
    case 'number':
    case 'integer':
    case 'boolean':
    case 'null': {
      const type = node.type as Scalar
      if (Object.hasOwn(node, 'const')) return fc.oneof(fc.constant(node.const), scalarValue[type])
      if (Array.isArray(node.enum)) return fc.oneof(fc.constantFrom(...node.enum), scalarValue[type])
      return fc.oneof(scalarValue[type], jsonData)
    }
    default:
      return jsonData
  }
}

describe('schema subset properties', () => {
  it('accepts every schema built from the subset grammar', () => {
    fc.assert(
      fc.property(validSchema, (schema) => {
        expect(schemaViolations(schema)).to.deep.equal([])
      }),
      { numRuns: NUM_RUNS },
    )
  })

  it('names the mutated node in a violation after one invalidating mutation', () => {
    const scenario = validSchema.chain((schema) => {
      const count = locate({ root: schema }).length
      return fc.tuple(fc.constant(schema), fc.nat({ max: count - 1 }), fc.nat({ max: mutations.length - 1 }))
    })
    fc.assert(
      fc.property(scenario, ([schema, index, which]) => {
        const holder = { root: clone(schema) }
        const target = locate(holder)[index]!
        const [, mutate] = mutations[which]!
        mutate(target)
        const violations = schemaViolations(holder.root)
        expect(violations.some((violation) => namesPath(violation, target.path))).to.equal(
          true,
          `no violation names ${target.path}: ${JSON.stringify(violations)}`,
        )
      }),
      { numRuns: NUM_RUNS },
    )
  })
})

/** ajv ignores `__proto__` in `properties`; renaming it gives ajv an equivalent problem it does solve. */
const RENAMED = 'renamed_proto'

function renameSchema(schema: unknown): unknown {
  const node = schema as Dict
  return build(
    Object.entries(node).map(([key, value]): [string, unknown] => {
      if (key === 'properties') {
        return [key, build(Object.entries(value as Dict).map(([name, child]) => [rename(name), renameSchema(child)]))]
      }
      if (key === 'required') return [key, (value as string[]).map(rename)]
      if (key === 'items') return [key, renameSchema(value)]
      if (key === 'oneOf') return [key, (value as unknown[]).map(renameSchema)]
      return [key, value]
    }),
  )
}

function renameValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(renameValue)
  if (typeof value !== 'object' || value === null) return value
  return build(Object.entries(value).map(([key, child]) => [rename(key), renameValue(child)]))
}

function rename(name: string): string {
  return name === '__proto__' ? RENAMED : name
}

describe('jsonViolations properties', () => {
  // the same options as lib/schema/json-validation.ts, on an independent instance
  const reference = new Ajv({ allErrors: true, strict: false, ownProperties: true, addUsedSchema: false })

  it('finds no violations exactly when ajv accepts the value', () => {
    let valid = 0
    let invalid = 0
    const scenario = validSchema.chain((schema) =>
      fc.tuple(fc.constant(schema), fc.oneof({ arbitrary: valueFor(schema), weight: 3 }, { arbitrary: jsonData, weight: 1 })),
    )
    fc.assert(
      fc.property(scenario, ([schema, value]) => {
        const renamed = renameSchema(schema) as Dict
        const expected = reference.validate(renamed, renameValue(value))
        reference.removeSchema(renamed)
        if (expected) valid++
        else invalid++
        expect(jsonViolations(schema, value).length === 0).to.equal(expected)
      }),
      { numRuns: NUM_COMPILING_RUNS },
    )
    expect(valid, 'valid samples').to.be.greaterThan(0)
    expect(invalid, 'invalid samples').to.be.greaterThan(0)
  })

  it('words and orders every violation of a subset schema exactly as ajv does', () => {
    let invalid = 0
    const scenario = validSchema.chain((schema) =>
      fc.tuple(fc.constant(schema), fc.oneof({ arbitrary: valueFor(schema), weight: 3 }, { arbitrary: jsonData, weight: 1 })),
    )
    fc.assert(
      fc.property(scenario, ([schema, value]) => {
        // ajv ignores `__proto__` in `properties`, where the subset validator honours it
        fc.pre(!JSON.stringify(schema).includes('"__proto__"'))
        const expected = ajvViolations(schema, value)
        if (expected.length > 0) invalid++
        expect(jsonViolations(schema, value)).to.deep.equal(expected)
      }),
      { numRuns: NUM_COMPILING_RUNS * 3 },
    )
    expect(invalid, 'invalid samples').to.be.greaterThan(0)
  })
})
