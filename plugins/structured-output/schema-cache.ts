/**
 * Requested output schemas interned by their JSON text, so that starts with equal schemas share
 * one schema object and what hangs off it: one compiled validator (cached per schema object by
 * `lib/schema/json-validation.ts`) and one tool definition. A caller that builds its schema afresh for
 * each start (the `subagent` tool parses one from every call) compiles it once, not per child.
 * The shared schema object is the cache's own deep-frozen copy of the text, so a caller that
 * changes its schema object later changes nothing a start already uses. Pure: no cordis.
 */
import { parseFrozenJson } from '../../lib/json/frozen-json.ts'
import { isFixedJson, type JsonShape, jsonShapeOf, matchesJsonShape } from '../../lib/json/json-shape.ts'
import type { JsonSchema, JsonValue } from '../../lib/types.ts'

/** Distinct schema texts kept at most; the least recently used one goes first. */
export const SCHEMA_CACHE_ENTRIES = 64

/** Longest schema text that is interned (longer ones are served per schema object only). */
export const SCHEMA_CACHE_MAX_TEXT = 65_536

/** What is kept for one schema text: the object every equal schema maps to, and the caller's value. */
export interface SchemaEntry<T> {
  /** A deep-frozen copy of the schema's JSON text. */
  readonly schema: JsonSchema
  readonly value: T
}

/** An entry and the shape of its text, which a schema object must still match to be served it. */
interface Interned<T> {
  readonly entry: SchemaEntry<T>
  readonly shape: JsonShape
}

/**
 * A bounded cache of schema entries. `entry` answers by object identity first (a weak map), as
 * long as the object still stands for the text it was first seen with (compared in one walk, no
 * serialization), then by JSON text: two equal schemas (same text, key order included, so the
 * model is shown the same parameters) get the entry made for the first. A schema object changed
 * since it was seen is checked and looked up again, so it is never served the validator of its
 * old text.
 */
export class SchemaCache<T> {
  #byText = new Map<string, Interned<T>>()
  #byObject = new WeakMap<object, Interned<T>>()
  /** Schema objects that were fixed (`isFixedJson`) when first seen: they cannot change, so no shape check. */
  #fixed = new WeakMap<object, Interned<T>>()

  /**
   * `check` is run on a schema not seen before, or changed since (it throws for a schema that must
   * not be used; nothing is cached then); `make` builds the value of a schema text not seen
   * before, from the entry's frozen copy.
   */
  constructor(
    private readonly check: (schema: JsonSchema) => void,
    private readonly make: (schema: JsonSchema) => T,
    readonly capacity = SCHEMA_CACHE_ENTRIES,
  ) {}

  /** Number of schema texts held. */
  get size(): number {
    return this.#byText.size
  }

  /**
   * The entry for `schema` as it is now, checked and made on first sight of its text. Throws what
   * `check` or `make` throw.
   */
  entry(schema: JsonSchema): SchemaEntry<T> {
    const fixed = this.#fixed.get(schema)
    if (fixed !== undefined) return fixed.entry
    const known = this.#byObject.get(schema)
    if (known !== undefined && matchesJsonShape(schema, known.shape)) return known.entry
    this.check(schema)
    // after the check: the schema is JSON data of bounded depth and size, so this cannot throw
    const text = JSON.stringify(schema)
    let interned = this.#byText.get(text)
    if (interned === undefined) {
      const copy = parseFrozenJson(text) as JsonSchema
      interned = { entry: { schema: copy, value: this.make(copy) }, shape: jsonShapeOf(copy as JsonValue) }
      if (text.length <= SCHEMA_CACHE_MAX_TEXT) this.#remember(text, interned)
    } else {
      // most recently used last: eviction takes the first
      this.#byText.delete(text)
      this.#byText.set(text, interned)
    }
    // checked JSON data of bounded depth: `isFixedJson` may recurse over it
    if (isFixedJson(schema)) this.#fixed.set(schema, interned)
    else this.#byObject.set(schema, interned)
    return interned.entry
  }

  /**
   * True when `schema` was deep-frozen data when `entry` first saw it (a frozen snapshot copy): it
   * cannot change, so `entry` answers it with the same entry until the cache is cleared.
   */
  isFixed(schema: JsonSchema): boolean {
    return this.#fixed.has(schema)
  }

  /** Forgets every schema (the plugin unloads); entries already handed out stay valid. */
  clear(): void {
    this.#byText = new Map()
    this.#byObject = new WeakMap()
    this.#fixed = new WeakMap()
  }

  #remember(text: string, interned: Interned<T>): void {
    this.#byText.set(text, interned)
    if (this.#byText.size > this.capacity) this.#byText.delete(this.#byText.keys().next().value!)
  }
}
