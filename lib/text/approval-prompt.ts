/**
 * The text side of the command-line approval prompt (SPEC §11.4): how a request reads in a
 * terminal and what an answer line means. Pure: no I/O, no cordis; every string a model or a tool
 * wrote goes through `printable`, so no escape sequence of theirs reaches the terminal.
 */
import { printable } from './terminal-text.ts'

/** What the prompt shows of an `ApprovalRequest` (§11.2); the full request has more fields. */
export interface PromptedRequest {
  /** Agent ids from the root to the asking agent. */
  path: readonly string[]
  depth: number
  label?: string
  tool: string
  /** The call's arguments: a parsed value, or the JSON text the model wrote. */
  args: unknown
}

/** A person's answer: §11.2's decision, as `ctx.approvals.decide` takes it. */
export interface PromptAnswer {
  approved: boolean
  reason?: string
  remember?: 'tree'
}

/** The words of the prompt, in the person's locale (`approvalPrompt.*` in `locales/*.yml`). */
export interface PromptWords {
  /** The header line: `{who}`, `{depth}`, `{path}` filled in. */
  header(params: { who: string; depth: number; path: string }): string
  root: string
  child(label: string | undefined): string
  tool: string
  arguments: string
  /** The marker that ends a string value cut short: `{count}` characters left out. */
  cut(count: number): string
  /** The line that stands for the lines cut off the end: `{count}` lines left out. */
  moreLines(count: number): string
}

export interface ArgumentsLayout {
  /** A string value longer than this is cut, with the marker after what is kept (default 200). */
  maxValueChars?: number
  /** At most this many lines of JSON; the rest is one "more lines" line (default 24). */
  maxLines?: number
}

const DEFAULT_VALUE_CHARS = 200
const DEFAULT_LINES = 24

/** The value with every string longer than `max` characters cut to `max`, plus `cut`'s marker. */
function cutStrings(value: unknown, max: number, cut: (count: number) => string): unknown {
  if (typeof value === 'string') {
    const chars = [...value]
    return chars.length > max ? `${chars.slice(0, max).join('')}${cut(chars.length - max)}` : value
  }
  if (Array.isArray(value)) return value.map((item) => cutStrings(item, max, cut))
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [cutStrings(key, max, cut) as string, cutStrings(item, max, cut)]))
  }
  return value
}

/**
 * A call's arguments as pretty JSON lines (2-space indent), long string values cut with the
 * `cut` marker and the whole cut to `maxLines` lines. Arguments given as text are parsed first;
 * text that is not JSON is shown as one (cut) string. Every line is printable.
 */
export function argumentsLines(args: unknown, words: Pick<PromptWords, 'cut' | 'moreLines'>, layout: ArgumentsLayout = {}): string[] {
  const maxValue = layout.maxValueChars ?? DEFAULT_VALUE_CHARS
  const maxLines = Math.max(2, layout.maxLines ?? DEFAULT_LINES)
  let value = args
  if (typeof args === 'string') {
    try {
      value = JSON.parse(args)
    } catch {
      value = args
    }
  }
  const json = JSON.stringify(cutStrings(value ?? {}, maxValue, words.cut), null, 2) ?? String(value)
  const lines = printable(json).split('\n')
  if (lines.length <= maxLines) return lines
  const kept = lines.slice(0, maxLines - 1)
  return [...kept, words.moreLines(lines.length - kept.length)]
}

/** Short form of an agent id: its first 8 characters, as the transcript shows it. */
export function shortId(id: string): string {
  return printable(id.slice(0, 8))
}

/**
 * The agents of `path` in words, root first: the root as `root <id>`, each other agent by its
 * label (from `labelOf`) and short id, joined with ` › `.
 */
export function pathText(path: readonly string[], words: Pick<PromptWords, 'root'>, labelOf: (id: string) => string | undefined): string {
  return path
    .map((id, index) => {
      const label = index === 0 ? words.root : labelOf(id)
      return label === undefined ? shortId(id) : `${printable(label)} ${shortId(id)}`
    })
    .join(' › ')
}

/**
 * The request as the prompt prints it: a header line (who asks, depth, path), the tool, and the
 * arguments as pretty JSON, each line printable.
 */
export function requestLines(
  request: PromptedRequest,
  words: PromptWords,
  labelOf: (id: string) => string | undefined = () => undefined,
  layout: ArgumentsLayout = {},
): string[] {
  const who = request.depth === 0 ? words.root : words.child(request.label === undefined ? undefined : printable(request.label))
  const lines = [words.header({ who, depth: request.depth, path: pathText(request.path, words, labelOf) })]
  // both labels padded to one column, so the JSON lines up under its first line
  const width = Math.max(words.tool.length, words.arguments.length) + 2
  lines.push(`${words.tool.padEnd(width)}${printable(request.tool)}`)
  const args = argumentsLines(request.args, words, layout)
  lines.push(`${words.arguments.padEnd(width)}${args[0]}`, ...args.slice(1).map((line) => `${' '.repeat(width)}${line}`))
  return lines
}

/**
 * What an answer line means: `y`/`yes` approve; `n`/`no`, optionally followed by a reason (after
 * a space or a colon), deny; `a`/`always` approve and remember for the tree. Case and surrounding
 * spaces do not matter. `undefined` for anything else (the prompt asks again).
 */
export function parseAnswer(line: string): PromptAnswer | undefined {
  const match = /^\s*([A-Za-z]+)(?:\s*[:\s]\s*(.*?))?\s*$/s.exec(line)
  if (!match) return undefined
  const word = match[1]!.toLowerCase()
  const rest = match[2] ?? ''
  if (word === 'y' || word === 'yes') return rest ? undefined : { approved: true }
  if (word === 'a' || word === 'always') return rest ? undefined : { approved: true, remember: 'tree' }
  if (word === 'n' || word === 'no') return rest ? { approved: false, reason: rest } : { approved: false }
  return undefined
}
