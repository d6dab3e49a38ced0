/**
 * Splits an agent definition file into its YAML front matter and its Markdown body, and parses
 * the front matter with the `yaml` package. Pure: the caller reads the file.
 */
import { isMap, LineCounter, parseDocument } from 'yaml'

/** The largest definition file read, in bytes: a persona is text a model reads, not a data dump. */
export const MAX_DEFINITION_BYTES = 256 * 1024

/**
 * The most alias expansions one front matter may make: a definition never needs many, and a
 * "billion laughs" document of nested aliases would otherwise expand to gigabytes.
 */
export const MAX_ALIAS_COUNT = 32

/** A problem found in one definition, at `line` of its file when known (1-based). */
export interface DefinitionProblem {
  readonly line?: number
  readonly message: string
}

/** The parsed front matter: the mapping, the body, and the file line of each top-level key. */
export interface FrontMatter {
  readonly fields: Record<string, unknown>
  /** The Markdown after the closing `---` line, trimmed; the persona. */
  readonly body: string
  /** File line (1-based) of a top-level key, when known. */
  lineOf(key: string): number | undefined
}

/** The problem of a file of `size` bytes, over `MAX_DEFINITION_BYTES`. */
export function tooLarge(size: number): DefinitionProblem {
  return { message: `file is ${size} bytes, more than the ${MAX_DEFINITION_BYTES} a definition may have` }
}

/**
 * The deepest bracket nesting a front matter may have before it is parsed: a definition needs a
 * few levels (an output schema), and the parser's own recursion on a bracket bomb costs seconds
 * before it gives out.
 */
export const MAX_NESTING = 64

/** True when `yaml` opens more than `MAX_NESTING` flow brackets (outside quotes) at once. */
function isTooDeep(yaml: string): boolean {
  let depth = 0
  let quote: string | undefined
  for (let i = 0; i < yaml.length; i++) {
    const char = yaml[i]
    if (quote) {
      if (char === '\\' && quote === '"') i++
      else if (char === quote) quote = undefined
    } else if (char === '"' || char === "'") quote = char
    else if (char === '\n') quote = undefined
    else if (char === '[' || char === '{') {
      if (++depth > MAX_NESTING) return true
    } else if ((char === ']' || char === '}') && depth > 0) depth--
  }
  return false
}

const utf8 = new TextDecoder('utf-8', { fatal: true })

/**
 * Decodes a file's bytes as UTF-8 text. Returns a problem for a file that is too large, holds a NUL
 * byte, or is not valid UTF-8 (binary junk), never throws.
 */
export function decodeDefinition(bytes: Uint8Array): string | DefinitionProblem {
  if (bytes.byteLength > MAX_DEFINITION_BYTES) return tooLarge(bytes.byteLength)
  if (bytes.includes(0)) return { message: 'file is not text (it holds a NUL byte)' }
  try {
    return utf8.decode(bytes)
  } catch {
    return { message: 'file is not UTF-8 text' }
  }
}

const FENCE = /^---[ \t]*$/

/**
 * Parses `text` (a whole definition file) into front matter and body. Returns the problems instead
 * when the file has no front matter, an unclosed one, YAML errors (each with its line), or a front
 * matter that is not a mapping. Never throws: a document too deeply nested for the parser, or one
 * whose aliases expand past `MAX_ALIAS_COUNT`, is a problem like any other.
 */
export function parseFrontMatter(text: string): FrontMatter | DefinitionProblem[] {
  const source = text.startsWith('\uFEFF') ? text.slice(1) : text
  const lines = source.split(/\r?\n/)
  if (!FENCE.test(lines[0] ?? '')) {
    return [{ line: 1, message: 'missing YAML front matter: the file must start with a "---" line' }]
  }
  let close = -1
  for (let i = 1; i < lines.length; i++) {
    if (FENCE.test(lines[i]!) || lines[i] === '...') {
      close = i
      break
    }
  }
  if (close < 0) return [{ line: 1, message: 'front matter is not closed: no "---" line after the first' }]
  const yamlText = lines.slice(1, close).join('\n')
  const body = lines.slice(close + 1).join('\n').trim()
  // the front matter starts on the file's second line
  const lineCounter = new LineCounter()
  const fileLine = (offset: number) => lineCounter.linePos(offset).line + 1
  if (isTooDeep(yamlText)) return [{ line: 2, message: 'front matter is nested too deeply' }]
  let fields: unknown
  let document: ReturnType<typeof parseDocument>
  try {
    document = parseDocument(yamlText, { lineCounter, prettyErrors: false, uniqueKeys: true, strict: true })
    if (document.errors.length > 0) {
      return document.errors.map((error) => ({ line: fileLine(error.pos[0]), message: yamlProblem(error.message) }))
    }
    fields = document.toJS({ maxAliasCount: MAX_ALIAS_COUNT })
  } catch (error) {
    return [{ message: `front matter could not be parsed: ${parseFailure(error)}` }]
  }
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields) || !isMap(document.contents)) {
    return [{ line: 2, message: 'front matter must be a mapping of fields (name: …, description: …)' }]
  }
  const lines0 = new Map<string, number>()
  for (const pair of document.contents.items) {
    const key = pair.key as { value?: unknown; range?: [number, number, number] } | null
    if (key && typeof key.value === 'string' && key.range) lines0.set(key.value, fileLine(key.range[0]))
  }
  return { fields: fields as Record<string, unknown>, body, lineOf: (key) => lines0.get(key) }
}

function firstLine(message: string): string {
  return message.split('\n', 1)[0]!.trim()
}

function yamlProblem(message: string): string {
  // the parser's own recursion gave out: a bracket or indentation bomb
  if (/call stack/i.test(message)) return 'front matter is nested too deeply'
  return `invalid YAML: ${firstLine(message)}`
}

function parseFailure(error: unknown): string {
  if (error instanceof RangeError) return 'it is nested too deeply'
  const message = error instanceof Error ? firstLine(error.message) : String(error)
  // the yaml package's own words for an alias bomb
  if (/alias/i.test(message)) return `its aliases expand too far (more than ${MAX_ALIAS_COUNT} expansions)`
  return message
}
