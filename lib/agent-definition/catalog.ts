/**
 * The set of agent definitions read from inline entries and files: each source validated on its
 * own, names unique across all of them. Pure: the caller reads the files.
 */
import { type AgentDefinition, readDefinition } from './definition.ts'
import { decodeDefinition, MAX_DEFINITION_BYTES, parseFrontMatter, tooLarge } from './front-matter.ts'

/** A problem of one source (a file path, or `definitions[<i>]`), at `line` when known. */
export interface SourceProblem {
  readonly source: string
  readonly line?: number
  readonly message: string
}

/** One definition file as read: its bytes, or why it could not be read. */
export interface DefinitionFile {
  readonly source: string
  readonly bytes?: Uint8Array
  readonly readError?: string
  /** The file's size, when it was too large to read (`bytes` is then absent). */
  readonly size?: number
}

export interface Catalog {
  /** Valid definitions, sorted by name. */
  readonly definitions: readonly AgentDefinition[]
  /** Every problem, in source order. */
  readonly problems: readonly SourceProblem[]
}

/** `<source>:<line>: <message>`, or `<source>: <message>` when the line is not known. */
export function formatProblem(problem: SourceProblem): string {
  return problem.line === undefined ? `${problem.source}: ${problem.message}` : `${problem.source}:${problem.line}: ${problem.message}`
}

/** Reads one file's definition, or its problems. Never throws. */
export function readDefinitionFile(file: DefinitionFile): AgentDefinition | SourceProblem[] {
  const { source } = file
  if (file.size !== undefined && file.size > MAX_DEFINITION_BYTES) return [{ source, ...tooLarge(file.size) }]
  if (file.bytes === undefined) return [{ source, message: `file could not be read: ${file.readError ?? 'unknown error'}` }]
  const text = decodeDefinition(file.bytes)
  if (typeof text !== 'string') return [{ source, ...text }]
  const parsed = parseFrontMatter(text)
  if (Array.isArray(parsed)) return parsed.map((problem) => ({ source, ...problem }))
  const read = readDefinition(parsed.fields, { source, body: parsed.body, lineOf: parsed.lineOf })
  return Array.isArray(read) ? read.map((problem) => ({ source, ...problem })) : read
}

/**
 * Builds the catalog: inline definitions first (sources `definitions[<i>]`), then `files` in the
 * order given. A name already taken by an earlier source is a problem of the later one (the
 * earlier keeps it), so a new file never replaces a definition under the same name.
 */
export function buildCatalog(inline: readonly unknown[], files: readonly DefinitionFile[]): Catalog {
  const byName = new Map<string, AgentDefinition>()
  const problems: SourceProblem[] = []
  const add = (read: AgentDefinition | SourceProblem[]) => {
    if (Array.isArray(read)) {
      problems.push(...read)
      return
    }
    const earlier = byName.get(read.name)
    if (earlier) problems.push({ source: read.source, message: `name "${read.name}" is already defined in ${earlier.source}` })
    else byName.set(read.name, read)
  }
  inline.forEach((fields, index) => {
    const source = `definitions[${index}]`
    const read = readDefinition(fields, { source })
    add(Array.isArray(read) ? read.map((problem) => ({ source, ...problem })) : read)
  })
  for (const file of files) add(readDefinitionFile(file))
  const definitions = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  return { definitions, problems }
}
