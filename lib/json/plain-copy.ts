/**
 * Copies of caller-owned data taken at a public entry, so that what is checked is what is used:
 * each property is read exactly once, and a getter can never show a check one value and the code
 * after it another. Pure: no cordis, no I/O.
 */
import { thrownMessage } from '../errors.ts'
import { appendSegment } from '../schema/subset-validation.ts'

/** One container being copied: its own keys (`undefined` for an array) and the next index. */
interface Frame {
  readonly source: object
  readonly copy: unknown[] | Record<string, unknown>
  readonly keys: string[] | undefined
  readonly length: number
  index: number
  /** The key of this container in its parent (absent for the root). */
  readonly key: string | number | undefined
}

/**
 * A deep, frozen copy of `value` at `path` (`subagent request budget`): arrays and plain objects
 * (prototype `Object.prototype` or `null`; own enumerable string keys) are copied, every element
 * and property read once, and a subtree shared within `value` stays shared in the copy; anything
 * else (a primitive, a function such as a schemastery schema, a class instance) is kept as it is,
 * unchecked: the copy changes what is read, never what is valid. Iterative, whatever the depth.
 * Throws `TypeError` `<path> could not be read: <reason>` for a getter that throws, naming the
 * property (`subagent request budget.tokens could not be read: …`), and `TypeError`
 * `<path> refers to itself` for a cycle.
 */
export function plainCopy<T>(value: T, path: string): T {
  if (!isCopied(value)) return value
  const copies = new Map<object, unknown>()
  const open = new Set<object>()
  const stack: Frame[] = [frameOf(value, undefined, copies, open)]
  let result: unknown
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!
    if (top.index === top.length) {
      stack.pop()
      open.delete(top.source)
      const done = Object.freeze(top.copy)
      const parent = stack[stack.length - 1]
      if (parent) store(parent, top.key!, done)
      else result = done
      continue
    }
    const index = top.index++
    const key = top.keys === undefined ? index : top.keys[index]!
    let child: unknown
    try {
      child = (top.source as Record<string | number, unknown>)[key]
    } catch (error) {
      throw new TypeError(`${pathOf(path, stack, key)} could not be read: ${thrownMessage(error)}`, { cause: error })
    }
    if (!isCopied(child)) {
      store(top, key, child)
      continue
    }
    if (open.has(child)) throw new TypeError(`${pathOf(path, stack, key)} refers to itself`)
    if (copies.has(child)) store(top, key, copies.get(child))
    else stack.push(frameOf(child, key, copies, open))
  }
  return result as T
}

function isCopied(value: unknown): value is object {
  if (typeof value !== 'object' || value === null) return false
  if (Array.isArray(value)) return true
  const prototype: unknown = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

function frameOf(source: object, key: string | number | undefined, copies: Map<object, unknown>, open: Set<object>): Frame {
  const keys = Array.isArray(source) ? undefined : Object.keys(source)
  const length = keys === undefined ? (source as unknown[]).length : keys.length
  const copy = keys === undefined ? new Array<unknown>(length) : {}
  copies.set(source, copy)
  open.add(source)
  return { source, copy, keys, length, index: 0, key }
}

function store(frame: Frame, key: string | number, value: unknown): void {
  if (frame.keys === undefined) (frame.copy as unknown[])[key as number] = value
  // defined, not assigned: an own `__proto__` key stays a plain key of the copy
  else Object.defineProperty(frame.copy, key, { value, enumerable: true, writable: false, configurable: false })
}

/** `path` through the keys of the open containers down to `key`: spelled only for an error. */
function pathOf(path: string, stack: readonly Frame[], key: string | number): string {
  let at = path
  for (let i = 1; i < stack.length; i++) at = appendSegment(at, stack[i]!.key!)
  return appendSegment(at, key)
}
