/**
 * A map for a handful of entries (an agent scope's own tools): one flat `[key, value, …]` array of
 * exact size instead of a `Map`, whose table alone takes about 280 bytes for a single entry. Lookups
 * scan, so keep it small. Pure: no cordis.
 */
export class SmallMap<K, V> {
  #entries: readonly (K | V)[] = []

  /** Number of entries. */
  get size(): number {
    return this.#entries.length / 2
  }

  has(key: K): boolean {
    return this.#indexOf(key) >= 0
  }

  get(key: K): V | undefined {
    const index = this.#indexOf(key)
    return index < 0 ? undefined : (this.#entries[index + 1] as V)
  }

  /** Sets `key` to `value`: in place when present, else appended (insertion order, as `Map`). */
  set(key: K, value: V): this {
    const index = this.#indexOf(key)
    // fresh arrays of exact size: a spread or `filter` reserves room for more entries than it holds
    if (index >= 0) {
      const entries = this.#entries.slice()
      entries[index + 1] = value
      this.#entries = entries
    } else {
      this.#entries = this.#entries.concat([key, value])
    }
    return this
  }

  /** Removes `key`; true when it was present. */
  delete(key: K): boolean {
    const index = this.#indexOf(key)
    if (index < 0) return false
    this.#entries = this.#entries.slice(0, index).concat(this.#entries.slice(index + 2))
    return true
  }

  /** The value of the only entry; `undefined` unless the map holds exactly one. */
  only(): V | undefined {
    const entries = this.#entries
    return entries.length === 2 ? (entries[1] as V) : undefined
  }

  /** The keys, in insertion order, as they were when the iteration started. */
  *keys(): IterableIterator<K> {
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
