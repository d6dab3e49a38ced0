/**
 * Deep-frozen JSON values (SPEC §1.5: a call's arguments, a result's value, a structured value):
 * copies with JSON semantics, JSON text frozen where it was parsed, and a depth check of a value
 * that is frozen already. Pure: no cordis, no I/O.
 */
import { isJsonScalar } from './json-data.ts'
import { appendSegment } from '../schema/subset-validation.ts'
import type { JsonValue } from '../types.ts'

type Dict = Record<string, unknown>

/** Thrown by `toFrozenJson` for a value nested deeper than its `maxDepth`. */
export class JsonDepthError extends TypeError {
  override readonly name = 'JsonDepthError'
  constructor(readonly maxDepth: number) {
    super(`value is nested deeper than ${maxDepth} levels`)
  }
}

/**
 * A deep, frozen copy of `value` with JSON semantics: plain objects (own enumerable string keys,
 * `__proto__` and `constructor` included as ordinary own data properties), arrays, strings, finite
 * numbers (`-0` becomes `0`), booleans and null; shared subtrees stay shared. Each property is read
 * once. Throws `TypeError` `<path> is not JSON data (<reason>)`, e.g.
 * `value.a[1] is not JSON data (function)`; with `maxDepth`, throws `JsonDepthError`
 * `value is nested deeper than <maxDepth> levels` for an object or array more than `maxDepth`
 * containers deep (the root container is level 1).
 */
export function toFrozenJson(value: unknown, maxDepth = Number.POSITIVE_INFINITY): JsonValue {
  if (typeof value !== 'object' || value === null) {
    if (!isJsonScalar(value)) throw notJsonData('value', value)
    return value === 0 ? 0 : value
  }
  if (maxDepth <= 0) throw new JsonDepthError(maxDepth)
  // the root's scalars are copied here, so a flat value (most tool arguments and results) needs no
  // walk state; its first nested container hands the rest of the root to a `CopyWalk`
  if (Array.isArray(value)) {
    const copy: JsonValue[] = []
    for (let index = 0; index < value.length; index++) {
      const child: unknown = value[index]
      if (typeof child === 'object' && child !== null) {
        const root: CopyFrame = { source: value, key: '', keys: undefined, length: value.length, index: index + 1, copy, height: 1 }
        return new CopyWalk(root, maxDepth).finish(child, index)
      }
      if (!isJsonScalar(child)) throw notJsonData(appendSegment('value', index), child)
      copy.push(child === 0 ? 0 : child)
    }
    Object.freeze(copy)
    return copy
  }
  if (!isPlainObject(value)) throw notJsonData('value', value)
  const keys = Object.keys(value)
  const copy: { [key: string]: JsonValue } = {}
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index]!
    const child = value[key]
    if (typeof child === 'object' && child !== null) {
      const root: CopyFrame = { source: value, key: '', keys, length: keys.length, index: index + 1, copy, height: 1 }
      return new CopyWalk(root, maxDepth).finish(child, key)
    }
    if (!isJsonScalar(child)) throw notJsonData(appendSegment('value', key), child)
    storeKey(copy, key, child === 0 ? 0 : child)
  }
  Object.freeze(copy)
  return copy
}

/**
 * `toFrozenJson(JSON.parse(text))` without the copy: what `JSON.parse` returns is fresh JSON data
 * nobody else holds (plain objects with own data keys, `__proto__` included, arrays without holes,
 * nothing shared), so it is frozen where it is, each `-0` made `0` first. Iterative, whatever the
 * depth. Throws `JSON.parse`'s `SyntaxError` for text that is not JSON.
 */
export function parseFrozenJson(text: string): JsonValue {
  const value: JsonValue = JSON.parse(text)
  if (typeof value !== 'object' || value === null) return value === 0 ? 0 : value
  // containers still to freeze, made on the first nested one: a flat value needs no list
  let pending: object[] | undefined
  for (let next: object | undefined = value; next !== undefined; next = pending?.pop()) {
    if (Array.isArray(next)) {
      for (let i = 0; i < next.length; i++) {
        const child: unknown = next[i]
        if (typeof child === 'object' && child !== null) (pending ??= []).push(child)
        else if (child === 0) next[i] = 0
      }
    } else {
      for (const key in next) {
        // an enumerable key someone added to Object.prototype is not the value's own
        if (!Object.hasOwn(next, key)) continue
        const child: unknown = (next as Dict)[key]
        if (typeof child === 'object' && child !== null) (pending ??= []).push(child)
        else if (child === 0) (next as Dict)[key] = 0
      }
    }
    Object.freeze(next)
  }
  return value
}

/**
 * The rest of a `toFrozenJson` copy once the root holds a container: an explicit stack (no
 * recursion, whatever the depth), with the tables for shared subtrees, cycles and heights made only
 * when a value needs them.
 */
class CopyWalk {
  readonly #stack: CopyFrame[]
  readonly #maxDepth: number
  readonly #bounded: boolean
  /** Finished containers below the root and their copies: a shared subtree is copied once. */
  #done: Map<object, JsonValue> | undefined
  /**
   * With a depth limit, the height of each copied container, so a shared one reused deeper down
   * still counts from there.
   */
  #heights: Map<object, number> | undefined
  /** The containers below the root on the current path (the root is `#stack[0].source`). */
  #onPath: Set<object> | undefined

  constructor(root: CopyFrame, maxDepth: number) {
    this.#stack = [root]
    this.#maxDepth = maxDepth
    this.#bounded = maxDepth !== Number.POSITIVE_INFINITY
  }

  /** Copies `child`, the root's container under `key` (already read), then the rest; returns the root's copy. */
  finish(child: object, key: string | number): JsonValue {
    const stack = this.#stack
    this.#visit(stack[0]!, child, key)
    let result: JsonValue = null
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!
      if (top.index === top.length) {
        result = this.#close(top)
        continue
      }
      const index = top.index++
      const childKey = top.keys === undefined ? index : top.keys[index]!
      const next: unknown = top.keys === undefined ? (top.source as unknown[])[index] : (top.source as Dict)[childKey]
      if (typeof next === 'object' && next !== null) this.#visit(top, next, childKey)
      else if (isJsonScalar(next)) store(top, childKey, next === 0 ? 0 : next)
      else throw notJsonData(this.#pathOf(childKey), next)
    }
    return result
  }

  /** Stores the copy of a container met under `top`: reused when copied before, else opened. */
  #visit(top: CopyFrame, child: object, key: string | number): void {
    const stack = this.#stack
    const copied = this.#done?.get(child)
    if (copied === undefined) {
      if (child === stack[0]!.source || this.#onPath?.has(child)) throw new TypeError(`${this.#pathOf(key)} is not JSON data (circular reference)`)
      this.#open(child, key)
      return
    }
    if (this.#bounded) {
      const height = this.#heights!.get(child)!
      if (stack.length + height > this.#maxDepth) throw new JsonDepthError(this.#maxDepth)
      if (height + 1 > top.height) top.height = height + 1
    }
    store(top, key, copied)
  }

  #open(source: object, key: string | number): void {
    const stack = this.#stack
    if (stack.length >= this.#maxDepth) throw new JsonDepthError(this.#maxDepth)
    if (Array.isArray(source)) {
      stack.push({ source, key, keys: undefined, length: source.length, index: 0, copy: [], height: 1 })
    } else if (isPlainObject(source)) {
      const keys = Object.keys(source)
      stack.push({ source, key, keys, length: keys.length, index: 0, copy: {}, height: 1 })
    } else {
      throw notJsonData(this.#pathOf(key), source)
    }
    ;(this.#onPath ??= new Set()).add(source)
  }

  /** Freezes the finished `top` and stores it in its parent; returns the copy. */
  #close(top: CopyFrame): JsonValue {
    const stack = this.#stack
    stack.pop()
    Object.freeze(top.copy)
    const copy = top.copy
    const parent = stack[stack.length - 1]
    if (parent === undefined) return copy
    this.#onPath!.delete(top.source)
    ;(this.#done ??= new Map()).set(top.source, copy)
    if (this.#bounded) {
      ;(this.#heights ??= new Map()).set(top.source, top.height)
      if (top.height + 1 > parent.height) parent.height = top.height + 1
    }
    store(parent, top.key, copy)
    return copy
  }

  /** The path of the value under `key` in the top frame (`value.a[1]`). */
  #pathOf(key: string | number): string {
    const stack = this.#stack
    let path = 'value'
    for (let i = 1; i < stack.length; i++) path = appendSegment(path, stack[i]!.key)
    return appendSegment(path, key)
  }
}

/**
 * `value` itself when it is deep-frozen JSON data (what `toFrozenJson` returns) whose deepest path
 * holds at most `maxDepth` containers, else `toFrozenJson(value, maxDepth)`: a value the host has
 * already copied is measured, not copied again. Throws `JsonDepthError` for a deeper value. Linear
 * in containers, not paths: a shared container is measured once, and its height counts at every
 * place it appears (`[x, x]` nested k levels is k levels, not 2^k walks, and a shared subtree
 * reached deep down counts from there).
 */
export function frozenJsonWithin(value: unknown, maxDepth: number): JsonValue {
  if (typeof value !== 'object' || value === null || !Object.isFrozen(value)) return toFrozenJson(value, maxDepth)
  // a flat container (a typical structured value) is one level deep: no walk state
  if (holdsNoContainer(value)) return value as JsonValue
  // heights (containers on the deepest path down from it, itself included) of finished containers
  // with a parent: made on the first nested container, so a flat value needs no map
  let heights: Map<object, number> | undefined
  const stack: HeightFrame[] = [{ node: value, children: Object.values(value), index: 0, height: 1 }]
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!
    if (top.index === top.children.length) {
      stack.pop()
      const parent = stack[stack.length - 1]
      if (parent !== undefined) {
        ;(heights ??= new Map()).set(top.node, top.height)
        if (top.height + 1 > parent.height) parent.height = top.height + 1
      }
      continue
    }
    const child = top.children[top.index++]
    if (typeof child !== 'object' || child === null) continue
    if (!Object.isFrozen(child)) return toFrozenJson(value, maxDepth)
    const known = heights?.get(child)
    if (known !== undefined) {
      if (stack.length + known > maxDepth) throw new JsonDepthError(maxDepth)
      if (known + 1 > top.height) top.height = known + 1
    } else {
      // a frozen cycle (never from `toFrozenJson`) ends here too, as too deep
      if (stack.length >= maxDepth) throw new JsonDepthError(maxDepth)
      stack.push({ node: child, children: Object.values(child), index: 0, height: 1 })
    }
  }
  return value as JsonValue
}

/** True when no own enumerable value of `container` is an object or array. */
function holdsNoContainer(container: object): boolean {
  if (Array.isArray(container)) {
    for (let i = 0; i < container.length; i++) {
      const child: unknown = container[i]
      if (typeof child === 'object' && child !== null) return false
    }
    return true
  }
  for (const key in container) {
    if (!Object.hasOwn(container, key)) continue
    const child: unknown = (container as Dict)[key]
    if (typeof child === 'object' && child !== null) return false
  }
  return true
}

interface HeightFrame {
  node: object
  children: unknown[]
  index: number
  height: number
}

interface CopyFrame {
  source: object
  /** The key under which the parent stores this copy. */
  key: string | number
  /** Own enumerable keys of an object; `undefined` for an array. */
  keys: string[] | undefined
  length: number
  index: number
  copy: JsonValue[] | { [key: string]: JsonValue }
  /** Containers on the deepest path down from this one, itself included (kept with a depth limit). */
  height: number
}

function store(frame: CopyFrame, key: string | number, value: JsonValue): void {
  if (Array.isArray(frame.copy)) frame.copy.push(value)
  else storeKey(frame.copy, key as string, value)
}

function storeKey(copy: { [key: string]: JsonValue }, key: string, value: JsonValue): void {
  // a data property, so `__proto__` becomes an own key instead of setting the prototype, and a name
  // Object.prototype has cannot meet a frozen prototype's read-only member; any other key of a
  // fresh plain object is created as one by a plain assignment, which is faster
  if (key in Object.prototype) Object.defineProperty(copy, key, { value, enumerable: true, writable: true, configurable: true })
  else copy[key] = value
}

/** `<path> is not JSON data (<reason>)` for a value that is not JSON data. */
function notJsonData(path: string, value: unknown): TypeError {
  const reason = typeof value === 'number' ? 'non-finite number' : typeof value === 'object' && value !== null ? 'non-plain object' : typeof value
  return new TypeError(`${path} is not JSON data (${reason})`)
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null
}

/** An object whose prototype is null or a realm's `Object.prototype` (no class instances, no arrays). */
function isPlainObject(value: unknown): value is Dict {
  if (!isObject(value) || Array.isArray(value)) return false
  const proto: unknown = Object.getPrototypeOf(value)
  return proto === null || Object.getPrototypeOf(proto) === null
}
