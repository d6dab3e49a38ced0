/**
 * Requested output schemas interned by their JSON text, so that starts with equal schemas share
 * one schema object and what hangs off it: one compiled validator (cached per schema object by
 * `lib/json-validation.ts`) and one tool definition. A caller that builds its schema afresh for
 * each start (the `subagent` tool parses one from every call) compiles it once, not per child.
 * Pure: no cordis.
 */
import type { JsonSchema } from '../../lib/types.ts'

/** Distinct schema texts kept at most; the least recently used one goes first. */
export const SCHEMA_CACHE_ENTRIES = 64

/** Longest schema text that is interned (longer ones are served per schema object only). */
export const SCHEMA_CACHE_MAX_TEXT = 65_536

/** What is kept for one schema: the object every equal schema maps to, and the caller's value. */
export interface SchemaEntry<T> {
  readonly schema: JsonSchema
  readonly value: T
}

/**
 * A bounded cache of schema entries. `entry` answers by object identity first (a weak map, so a
 * schema object seen before costs one lookup), then by JSON text: two equal schemas (same text,
 * key order included, so the model is shown the same parameters) get the entry made for the first.
 */
export class SchemaCache<T> {
  #byText = new Map<string, SchemaEntry<T>>()
  #byObject = new WeakMap<object, SchemaEntry<T>>()

  /**
   * `check` is run on a schema object not seen before (it throws for a schema that must not be
   * used; nothing is cached then); `make` builds the value of a schema text not seen before.
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

  /** The entry for `schema`, checked and made on first sight. Throws what `check` or `make` throw. */
  entry(schema: JsonSchema): SchemaEntry<T> {
    const known = this.#byObject.get(schema)
    if (known !== undefined) return known
    this.check(schema)
    // after the check: the schema is JSON data of bounded depth and size, so this cannot throw
    const text = JSON.stringify(schema)
    let entry = this.#byText.get(text)
    if (entry === undefined) {
      entry = { schema, value: this.make(schema) }
      if (text.length <= SCHEMA_CACHE_MAX_TEXT) this.#remember(text, entry)
    } else {
      // most recently used last: eviction takes the first
      this.#byText.delete(text)
      this.#byText.set(text, entry)
    }
    this.#byObject.set(schema, entry)
    return entry
  }

  /** Forgets every schema (the plugin unloads); entries already handed out stay valid. */
  clear(): void {
    this.#byText = new Map()
    this.#byObject = new WeakMap()
  }

  #remember(text: string, entry: SchemaEntry<T>): void {
    this.#byText.set(text, entry)
    if (this.#byText.size > this.capacity) this.#byText.delete(this.#byText.keys().next().value!)
  }
}
