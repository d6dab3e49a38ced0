/**
 * A first-in-first-out line with O(1) push, shift and removal of any entry (a waiter that gave up).
 * Pure: no cordis, no timers.
 */

/** One place in the line; `remove()` takes it out wherever it stands (idempotent). */
export interface Place<T> {
  readonly value: T
  remove(): void
}

interface Node<T> extends Place<T> {
  prev?: Node<T>
  next?: Node<T>
  linked: boolean
}

export class WaitingLine<T> {
  #head?: Node<T>
  #tail?: Node<T>
  #size = 0

  get size(): number {
    return this.#size
  }

  /** Joins the end of the line. */
  push(value: T): Place<T> {
    const node: Node<T> = { value, linked: true, remove: () => this.#unlink(node) }
    if (this.#tail) {
      this.#tail.next = node
      node.prev = this.#tail
    } else this.#head = node
    this.#tail = node
    this.#size++
    return node
  }

  /** Takes the front of the line, or `undefined` when it is empty. */
  shift(): T | undefined {
    const node = this.#head
    if (!node) return undefined
    this.#unlink(node)
    return node.value
  }

  /** Empties the line, front first. */
  *drain(): Generator<T> {
    for (let value = this.shift(); value !== undefined; value = this.shift()) yield value
  }

  #unlink(node: Node<T>): void {
    if (!node.linked) return
    node.linked = false
    if (node.prev) node.prev.next = node.next
    else this.#head = node.next
    if (node.next) node.next.prev = node.prev
    else this.#tail = node.prev
    node.prev = node.next = undefined
    this.#size--
  }
}
