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

/** Deepest copy `PlainCopies` remembers (the root is level 1): its comparison recurses along the copy. */
export const REMEMBERED_COPY_DEPTH = 64

/** A remembered copy: a container of it, its own keys (`undefined` for an array), the nodes of its containers. */
class CopyNode {
  declare readonly copy: Readonly<Record<string | number, unknown>>
  declare readonly keys: readonly string[] | undefined
  /** Per element or key, in order: the node of a copied container, or `undefined` for a kept value. */
  declare readonly children: readonly (CopyNode | undefined)[]

  constructor(copy: object, keys: readonly string[] | undefined, children: readonly (CopyNode | undefined)[]) {
    this.copy = copy as Record<string | number, unknown>
    this.keys = keys
    this.children = children
  }
}

/**
 * Copies of caller objects handed in again and again (one output schema literal for every start):
 * `copy(value, path)` is `plainCopy(value, path)`, except that an object whose copy was made here
 * before, and which still holds the same data (the same own enumerable keys in the same order, the
 * same scalars by `Object.is`, the same kept objects by identity, arrays of the same length), gets
 * that same frozen copy back. The comparison reads each property once; an object that changed is
 * copied afresh (and read again), so what a caller gets is always what was read last. Copies with
 * a shared subtree or deeper than `REMEMBERED_COPY_DEPTH` are not remembered. Weak: an entry lives
 * as long as the caller's object. Throws what `plainCopy` throws.
 */
export class PlainCopies {
  readonly #nodes = new WeakMap<object, CopyNode>()

  copy<T>(value: T, path: string): T {
    if (!isCopied(value)) return value
    const known = this.#nodes.get(value)
    if (known !== undefined && holds(value, known)) return known.copy as T
    const copy = plainCopy(value, path)
    const node = nodeOf(copy as object, new Set(), 1)
    if (node === undefined) this.#nodes.delete(value)
    else this.#nodes.set(value, node)
    return copy
  }
}

/** The node of a frozen copy, or `undefined` when it shares a subtree or is too deep to remember. */
function nodeOf(copy: object, seen: Set<object>, depth: number): CopyNode | undefined {
  if (depth > REMEMBERED_COPY_DEPTH || seen.has(copy)) return undefined
  seen.add(copy)
  const keys = Array.isArray(copy) ? undefined : Object.keys(copy)
  const values: readonly unknown[] = keys === undefined ? (copy as unknown[]) : keys.map((key) => (copy as Record<string, unknown>)[key])
  const children = new Array<CopyNode | undefined>(values.length)
  for (let i = 0; i < values.length; i++) {
    const item = values[i]
    if (!isCopied(item)) continue
    const child = nodeOf(item, seen, depth + 1)
    if (child === undefined) return undefined
    children[i] = child
  }
  return new CopyNode(copy, keys, children)
}

/**
 * True when `value` (a copied container) still holds the data of `node`'s copy; reads each property
 * once. A getter that throws is a difference: the fresh copy that follows reads it again and names it.
 */
function holds(value: object, node: CopyNode): boolean {
  const { copy, keys, children } = node
  if (keys === undefined) {
    if (!Array.isArray(value) || value.length !== children.length) return false
    for (let i = 0; i < children.length; i++) {
      const item = readOrMiss(value, i)
      if (item === MISS || !sameItem(item, copy[i], children[i])) return false
    }
    return true
  }
  if (Array.isArray(value)) return false
  let index = 0
  for (const key in value) {
    // an enumerable key someone added to Object.prototype is not the value's own
    if (!Object.hasOwn(value, key)) continue
    if (index === keys.length || key !== keys[index]) return false
    const item = readOrMiss(value, key)
    if (item === MISS || !sameItem(item, copy[key], children[index])) return false
    index++
  }
  return index === keys.length
}

function sameItem(item: unknown, copied: unknown, child: CopyNode | undefined): boolean {
  if (child === undefined) return !isCopied(item) && Object.is(item, copied)
  return isCopied(item) && holds(item, child)
}

const MISS = Symbol('unreadable')

function readOrMiss(value: object, key: string | number): unknown {
  try {
    return (value as Record<string | number, unknown>)[key]
  } catch {
    return MISS
  }
}
