/**
 * Content blocks at the boundary (SPEC §1.1): what a caller, a tool or a plugin hands the host must
 * be one of the three documented shapes before it reaches a session log, which holds JSON only.
 */
import type { ContentBlock } from './types.ts'

/** A value's kind as a message names it: `null`, `array`, or its `typeof`. */
export function kindOf(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value
}

/**
 * Why `value` is not a `ContentBlock`, as a phrase that follows its name (`must be an object`,
 * `text must be a string`, `has unknown type "image"`), or `undefined` when it is one.
 */
export function contentBlockProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return `must be an object, got ${kindOf(value)}`
  const block = value as Record<string, unknown>
  switch (block.type) {
    case 'text':
    case 'reasoning':
      return typeof block.text === 'string' ? undefined : `text must be a string, got ${kindOf(block.text)}`
    case 'tool-call':
      for (const key of ['id', 'name', 'arguments']) {
        if (typeof block[key] !== 'string') return `${key} must be a string, got ${kindOf(block[key])}`
      }
      return undefined
    default:
      return typeof block.type === 'string'
        ? `has unknown type ${JSON.stringify(block.type)}`
        : `type must be "text", "reasoning" or "tool-call", got ${kindOf(block.type)}`
  }
}

/**
 * The text blocks of `content`, joined with `separator` (a line break unless given); reasoning and
 * tool calls are left out. `''` for content with no text block.
 */
export function textOf(content: readonly ContentBlock[], separator = '\n'): string {
  let text = ''
  let first = true
  for (const block of content) {
    if (block.type !== 'text') continue
    text = first ? block.text : text + separator + block.text
    first = false
  }
  return text
}

/** A copy of a block with only its documented fields (extra keys may hold anything), each read once. */
export function copyContentBlock(block: ContentBlock): ContentBlock {
  const type = block.type
  return type === 'tool-call' ? { type, id: block.id, name: block.name, arguments: block.arguments } : { type, text: block.text }
}

/**
 * Checks and copies a list of blocks; throws `TypeError` `<what> <index> <problem>` (e.g.
 * `message content block 0 text must be a string, got number`) for the first bad one. The copy is
 * what is checked, so every field is read once: a getter cannot show the check one value and the
 * copy another, and the copy is plain JSON (fresh blocks of strings) once it passes.
 */
export function copyContent(blocks: readonly unknown[], what: string): ContentBlock[] {
  const copy: ContentBlock[] = new Array(blocks.length)
  for (let i = 0; i < blocks.length; i++) {
    const block = blocks[i]
    const candidate = typeof block === 'object' && block !== null && !Array.isArray(block) ? copyContentBlock(block as ContentBlock) : block
    const problem = contentBlockProblem(candidate)
    if (problem) throw new TypeError(`${what} ${i} ${problem}`)
    copy[i] = candidate as ContentBlock
  }
  return copy
}
