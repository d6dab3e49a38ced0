/**
 * The text of a system prompt from its sections (SPEC §1.6): non-empty sections by `order`, ties
 * in list order, joined with a blank line. Pure: no cordis.
 */
import type { PromptSection } from '../types.ts'

/** Renders `sections`; a list already in order (the common case) is joined without sorting. */
export function promptText(sections: readonly PromptSection[]): string {
  let text: string | undefined
  let last = Number.NEGATIVE_INFINITY
  for (let index = 0; index < sections.length; index++) {
    const section = sections[index]!
    const { order } = section
    // anything a listener may have put there that is not plain (a string order, NaN, a text that
    // is not a string) takes the general path, so the answer is the sort's in every case
    if (typeof section.text !== 'string' || typeof order !== 'number' || !(order >= last)) return sortedText(sections)
    if (section.text === '') continue
    last = order
    text = text === undefined ? section.text : `${text}\n\n${section.text}`
  }
  return text ?? ''
}

function sortedText(sections: readonly PromptSection[]): string {
  const ranked = sections
    .map((section, index) => ({ section, index }))
    .filter(({ section }) => section.text !== '')
    .sort((a, b) => a.section.order - b.section.order || a.index - b.index)
  return ranked.map(({ section }) => section.text).join('\n\n')
}

/**
 * `promptText` that remembers its last answer with the orders and texts it came from: agents
 * assembled one after another from equal sections (siblings started alike) share one rendering
 * instead of paying a sort and a join each. Compared by value, so a section edited in place since
 * is rendered again.
 */
export class PromptTextCache {
  #orders: number[] = []
  #texts: string[] = []
  #text = ''

  /** The text of `sections`, as `promptText` renders it. */
  text(sections: readonly PromptSection[]): string {
    if (this.#matches(sections)) return this.#text
    const text = promptText(sections)
    const orders: number[] = []
    const texts: string[] = []
    for (const section of sections) {
      orders.push(section.order)
      texts.push(section.text)
    }
    this.#orders = orders
    this.#texts = texts
    this.#text = text
    return text
  }

  #matches(sections: readonly PromptSection[]): boolean {
    const orders = this.#orders
    const texts = this.#texts
    if (sections.length !== orders.length) return false
    for (let index = 0; index < sections.length; index++) {
      const section = sections[index]!
      if (section.order !== orders[index] || section.text !== texts[index]) return false
    }
    return true
  }
}
