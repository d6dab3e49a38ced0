/**
 * The documentation read the way a reader finds things in it: a section by its heading, the fenced
 * code blocks and table rows in it. The docs specs test what these return, so a snippet that rots
 * in the README fails a test instead of a newcomer.
 */
import { readFileSync } from 'node:fs'

export interface CodeBlock {
  /** The fence's info string (`ts`, `yaml`, …), empty when there is none. */
  lang: string
  body: string
}

/** The text of a file of this repository, by its path from the repository root. */
export function readDoc(path: string): string {
  return readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8')
}

/**
 * The text under the heading whose text is `heading` (any level), up to the next heading of any
 * level (a subsection is not part of it); headings inside code fences do not count. Throws naming
 * the heading when there is none, so a renamed section fails loudly.
 */
export function section(markdown: string, heading: string): string {
  const lines = markdown.split('\n')
  let inFence = false
  let start = -1
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!
    if (/^\s*```/.test(line)) inFence = !inFence
    if (inFence) continue
    const match = /^(#+) (.*)$/.exec(line)
    if (!match) continue
    if (start >= 0) return lines.slice(start, index).join('\n')
    if (match[2]!.trim() === heading) start = index + 1
  }
  if (start < 0) throw new Error(`no section "${heading}"`)
  return lines.slice(start).join('\n')
}

/** Every fenced code block of `markdown`, in order, optionally only those of one language. */
export function codeBlocks(markdown: string, lang?: string): CodeBlock[] {
  const blocks: CodeBlock[] = []
  for (const match of markdown.matchAll(/^ *```(\S*)\n([\s\S]*?)^ *```$/gm)) {
    const block = { lang: match[1] ?? '', body: match[2] ?? '' }
    if (lang === undefined || block.lang === lang) blocks.push(block)
  }
  return blocks
}

/** The one code block of `lang` in `markdown`; throws when there is not exactly one. */
export function onlyBlock(markdown: string, lang: string): string {
  const blocks = codeBlocks(markdown, lang)
  if (blocks.length !== 1) throw new Error(`expected one ${lang} block, found ${blocks.length}`)
  return blocks[0]!.body
}

/**
 * The body rows of the tables in `markdown`, each keyed by its table's header cells (trimmed, code
 * spans as written); header and rule rows are not rows.
 */
export function tableRows(markdown: string): Record<string, string>[] {
  const rows: Record<string, string>[] = []
  let header: string[] = []
  let previous = ''
  for (const line of markdown.split('\n')) {
    if (line.startsWith('|') && !previous.startsWith('|')) header = splitRow(line)
    else if (line.startsWith('|') && !/^\|[\s:|-]+\|$/.test(line)) {
      const cells = splitRow(line)
      rows.push(Object.fromEntries(header.map((name, index) => [name, cells[index] ?? ''])))
    }
    previous = line
  }
  return rows
}

/** A table row's cells; `\|` is a pipe inside a cell. */
function splitRow(line: string): string[] {
  return line
    .slice(1, line.endsWith('|') ? -1 : undefined)
    .split(/(?<!\\)\|/)
    .map((cell) => cell.trim())
}
