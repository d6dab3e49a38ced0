/**
 * A JSON value kept as a shape that a live object can be compared with without serializing it:
 * does the object still stand for the same JSON text? Used to tell whether a schema object seen
 * before was changed since. Pure: no cordis, no I/O.
 */
import type { JsonValue } from '../types.ts'

/** A JSON scalar, or an object or array shape. */
export type JsonShape = string | number | boolean | null | ObjectShape | ArrayShape

class ObjectShape {
  constructor(
    readonly keys: readonly string[],
    readonly values: readonly JsonShape[],
  ) {}
}

class ArrayShape {
  constructor(readonly items: readonly JsonShape[]) {}
}

/** The shape of JSON data (what `JSON.parse` returns); recursive, so for data of bounded depth. */
export function jsonShapeOf(value: JsonValue): JsonShape {
  if (typeof value !== 'object' || value === null) return value
  if (Array.isArray(value)) return new ArrayShape(value.map(jsonShapeOf))
  const keys = Object.keys(value)
  return new ObjectShape(
    keys,
    keys.map((key) => jsonShapeOf(value[key]!)),
  )
}

/**
 * True when `JSON.stringify(value)` would give the text `shape` was made from: the same own
 * enumerable keys in the same order, equal scalars, arrays of the same length. False (never a wrong
 * true) for what it cannot tell by reading: a `toJSON` method, an `undefined`, function or
 * non-finite number anywhere, an array hole, an object that is not plain (a boxed primitive). Reads each property once; recursion is bounded by the
 * shape's depth, not the value's, so a deep or cyclic value costs no more than the shape.
 */
export function matchesJsonShape(value: unknown, shape: JsonShape): boolean {
  if (typeof shape !== 'object' || shape === null) return value === shape
  if (typeof value !== 'object' || value === null) return false
  // `JSON.stringify` would serialize what `toJSON` returns instead
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return false
  if (shape instanceof ArrayShape) {
    if (!Array.isArray(value)) return false
    const { items } = shape
    if (value.length !== items.length) return false
    for (let i = 0; i < items.length; i++) if (!matchesJsonShape(value[i], items[i]!)) return false
    return true
  }
  if (Array.isArray(value)) return false
  // a boxed primitive has own keys (a String's indices) but JSON.stringify writes its primitive
  const proto: unknown = Object.getPrototypeOf(value)
  if (proto !== Object.prototype && proto !== null) return false
  const { keys, values } = shape
  let at = 0
  for (const key in value) {
    // an enumerable key someone added to Object.prototype is not the value's own
    if (!Object.hasOwn(value, key)) continue
    if (at === keys.length || key !== keys[at] || !matchesJsonShape((value as Record<string, unknown>)[key], values[at]!)) return false
    at++
  }
  return at === keys.length
}

/**
 * True when `value` can never stand for another JSON text than it does now, so it needs no shape
 * check: a scalar, or a frozen array or plain object whose own properties are all data properties
 * (no getter) holding such values. Recursive, so for data of bounded depth.
 */
export function isFixedJson(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true
  if (!Object.isFrozen(value)) return false
  if (!Array.isArray(value)) {
    const proto: unknown = Object.getPrototypeOf(value)
    if (proto !== Object.prototype && proto !== null) return false
  }
  const descriptors = Object.getOwnPropertyDescriptors(value)
  for (const key in descriptors) {
    const descriptor = descriptors[key]!
    if (!('value' in descriptor) || !isFixedJson(descriptor.value)) return false
  }
  return true
}
