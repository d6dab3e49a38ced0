/**
 * The one rule for what session event data may hold, used where an event is appended and where a
 * seed or a stored session is read back, so that whatever is written can always be read. Plain
 * code: no cordis, no I/O.
 *
 * JSON data is `null`, a boolean, a string, a finite number, an array without holes, or an object
 * whose prototype is `Object.prototype` or `null` (its own enumerable string keys count), nested
 * at most `MAX_JSON_DATA_DEPTH` containers deep (the outermost array or object is level 1).
 */

/** Deepest nesting of arrays and objects in event data; a cycle always exceeds it. */
export const MAX_JSON_DATA_DEPTH = 256

/** What breaks the rule: too deep (or circular), or one value that is not JSON at `path`. */
export type JsonDataViolation =
  | { kind: 'too-deep' }
  /** `path` is rooted at `root` (`data.items[2]`); `found` reads as "`path` is `found`". */
  | { kind: 'not-json'; path: string; found: string }

interface Frame {
  container: object
  /** Own enumerable keys of an object; `undefined` for an array. */
  keys: string[] | undefined
  length: number
  index: number
}

/**
 * The first way `value` breaks the JSON-data rule, or `undefined` when it holds. Iterative (no
 * recursion whatever the depth) and allocation-light, since it runs on every append. `root` names
 * the value in a violation's path. Never throws for plain data; a throwing getter propagates.
 */
export function jsonDataViolation(value: unknown, root = 'data'): JsonDataViolation | undefined {
  // valid data (nearly every append) is confirmed without allocating; only a violation pays for
  // the frame walk below, which finds and names it
  if (isJsonData(value, 0)) return undefined
  if (typeof value !== 'object' || value === null) {
    return isJsonScalar(value) ? undefined : { kind: 'not-json', path: root, found: describe(value) }
  }
  const stack: Frame[] = []
  const rootFound = open(value, stack)
  if (rootFound !== undefined) return { kind: 'not-json', path: root, found: rootFound }
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!
    if (top.index === top.length) {
      stack.pop()
      continue
    }
    const index = top.index++
    const child: unknown =
      top.keys === undefined ? (top.container as unknown[])[index] : (top.container as Record<string, unknown>)[top.keys[index]!]
    if (typeof child !== 'object' || child === null) {
      if (!isJsonScalar(child)) return { kind: 'not-json', path: pathOf(root, stack), found: describe(child) }
      continue
    }
    if (stack.length >= MAX_JSON_DATA_DEPTH) return { kind: 'too-deep' }
    const found = open(child, stack)
    if (found !== undefined) {
      // the frame was not pushed: the path ends at the parent's current key
      return { kind: 'not-json', path: pathOf(root, stack), found }
    }
  }
  return undefined
}

/**
 * The rule as a yes/no answer, allocation-free: recursion is bounded by `MAX_JSON_DATA_DEPTH`
 * (a cycle hits the bound), and `for…in` walks keys without the array `Object.keys` makes. A key
 * `for…in` finds that is not own (an enumerable property added to `Object.prototype`) is skipped,
 * as `Object.keys` would skip it.
 */
function isJsonData(value: unknown, depth: number): boolean {
  if (typeof value !== 'object' || value === null) return isJsonScalar(value)
  if (depth >= MAX_JSON_DATA_DEPTH) return false
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!isJsonData(value[i], depth + 1)) return false
    return true
  }
  const proto: unknown = Object.getPrototypeOf(value)
  if (proto !== Object.prototype && proto !== null) return false
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue
    if (!isJsonData((value as Record<string, unknown>)[key], depth + 1)) return false
  }
  return true
}

/** Pushes a frame for a JSON container; returns what it is instead when it is not one. */
function open(container: object, stack: Frame[]): string | undefined {
  if (Array.isArray(container)) {
    stack.push({ container, keys: undefined, length: container.length, index: 0 })
    return undefined
  }
  const proto: unknown = Object.getPrototypeOf(container)
  if (proto !== Object.prototype && proto !== null) return describe(container)
  const keys = Object.keys(container)
  stack.push({ container, keys, length: keys.length, index: 0 })
  return undefined
}

/** Null, a string, a boolean or a finite number: JSON's scalars. */
export function isJsonScalar(value: unknown): value is null | string | boolean | number {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true
    case 'number':
      return Number.isFinite(value)
    default:
      return value === null
  }
}

/** The key each open frame is at: the path of the value being looked at. */
function pathOf(root: string, stack: readonly Frame[]): string {
  let path = root
  for (const frame of stack) {
    const index = frame.index - 1
    path = frame.keys === undefined ? `${path}[${index}]` : appendKey(path, frame.keys[index]!)
  }
  return path
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/

function appendKey(path: string, key: string): string {
  return IDENTIFIER.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`
}

function describe(value: unknown): string {
  switch (typeof value) {
    case 'undefined':
      return 'undefined'
    case 'number':
      return String(value)
    case 'function':
      return 'a function'
    case 'bigint':
      return 'a bigint'
    case 'symbol':
      return 'a symbol'
  }
  let name: unknown
  try {
    name = (Object.getPrototypeOf(value) as { constructor?: { name?: unknown } }).constructor?.name
  } catch {}
  if (typeof name !== 'string' || !IDENTIFIER.test(name)) return 'an object with a custom prototype'
  return `${/^[AEIOU]/.test(name) ? 'an' : 'a'} ${name} object`
}
