/** Past this many entries a `SmallMap` keeps a `Map`: scanning and copying would grow with the square. */
const LARGE = 16

/**
 * A map for a handful of entries (an agent scope's own tools): one flat `[key, value, …]` array of
 * exact size instead of a `Map`, whose table alone takes about 280 bytes for a single entry. Past
 * 16 entries it moves them into a `Map` and keeps it, so a scope with thousands of tools costs
 * what a `Map` costs. Pure: no cordis.
 */
export class SmallMap<K, V> {
  #entries: readonly (K | V)[] = []
  #large: Map<K, V> | undefined = undefined

  /** Number of entries. */
  get size(): number {
    return this.#large ? this.#large.size : this.#entries.length / 2
  }

  has(key: K): boolean {
    return this.#large ? this.#large.has(key) : this.#indexOf(key) >= 0
  }

  get(key: K): V | undefined {
    if (this.#large) return this.#large.get(key)
    const index = this.#indexOf(key)
    return index < 0 ? undefined : (this.#entries[index + 1] as V)
  }

  /** Sets `key` to `value`: in place when present, else appended (insertion order, as `Map`). */
  set(key: K, value: V): this {
    if (this.#large) {
      this.#large.set(key, value)
      return this
    }
    const index = this.#indexOf(key)
    // fresh arrays of exact size: a spread or `filter` reserves room for more entries than it holds
    if (index >= 0) {
      const entries = this.#entries.slice()
      entries[index + 1] = value
      this.#entries = entries
    } else if (this.#entries.length < LARGE * 2) {
      this.#entries = this.#entries.concat([key, value])
    } else {
      const large = new Map<K, V>()
      for (let i = 0; i < this.#entries.length; i += 2) large.set(this.#entries[i] as K, this.#entries[i + 1] as V)
      this.#large = large.set(key, value)
      this.#entries = []
    }
    return this
  }

  /** Removes `key`; true when it was present. */
  delete(key: K): boolean {
    if (this.#large) return this.#large.delete(key)
    const index = this.#indexOf(key)
    if (index < 0) return false
    this.#entries = this.#entries.slice(0, index).concat(this.#entries.slice(index + 2))
    return true
  }

  /** The value of the only entry; `undefined` unless the map holds exactly one. */
  only(): V | undefined {
    if (this.#large) return this.#large.size === 1 ? this.#large.values().next().value : undefined
    const entries = this.#entries
    return entries.length === 2 ? (entries[1] as V) : undefined
  }

  /** True when `test` holds for some value (asked in insertion order, stopping at the first). */
  someValue(test: (value: V) => boolean): boolean {
    if (this.#large) {
      for (const value of this.#large.values()) if (test(value)) return true
      return false
    }
    const entries = this.#entries
    for (let i = 1; i < entries.length; i += 2) if (test(entries[i] as V)) return true
    return false
  }

  /** The keys, in insertion order, as they were when the iteration started. */
  *keys(): IterableIterator<K> {
    if (this.#large) {
      yield* Array.from(this.#large.keys())
      return
    }
    const entries = this.#entries
    for (let i = 0; i < entries.length; i += 2) yield entries[i] as K
  }

  #indexOf(key: K): number {
    const entries = this.#entries
    // SameValueZero, as `Map`: NaN finds NaN, -0 finds 0
    const isNaNKey = Number.isNaN(key)
    for (let i = 0; i < entries.length; i += 2) if (entries[i] === key || (isNaNKey && Number.isNaN(entries[i]))) return i
    return -1
  }
}
