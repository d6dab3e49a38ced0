/**
 * What an MCP server's `tools/list` answer becomes: the tools the host can register under
 * `mcp__<server>__<tool>`, and one reason for each listed tool it cannot. Pure: no SDK, no I/O.
 */
import type { JsonSchema } from '../types.ts'

/** A server name as the `McpTools` config accepts it (also the middle of every tool name). */
export const SERVER_NAME = /^[A-Za-z0-9_-]+$/

/** A tool name the host accepts (its registry's rule). */
const HOST_TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/

/** Tools registered per server at most: past it a listing is cut (a model cannot use thousands). */
export const MAX_TOOLS_PER_SERVER = 512

/** Characters of a tool description kept (it goes into every model request); longer ones are cut. */
export const MAX_DESCRIPTION_CHARS = 4096

/** Appended to a description cut at `MAX_DESCRIPTION_CHARS`. */
export const CUT_MARKER = ' […]'

/** The host's name for `tool` of `server`. */
export function mcpToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool}`
}

/** One server tool as the host registers it. */
export interface ListedTool {
  /** The server's own name of the tool (what `tools/call` is sent). */
  readonly serverName: string
  /** `mcp__<server>__<tool>`. */
  readonly name: string
  readonly description: string
  readonly parameters: JsonSchema
  readonly readOnly: boolean
}

/** The outcome of `sortListing`. */
export interface Listing {
  readonly tools: readonly ListedTool[]
  /** One line per tool left out: `"<name>": <why>`. */
  readonly skipped: readonly string[]
  /** How many listed tools were past `MAX_TOOLS_PER_SERVER` (not examined). */
  readonly cut: number
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Shows a value in a log line: quoted text, cut to 60 characters. */
function shown(value: unknown): string {
  const text = typeof value === 'string' ? value : String(JSON.stringify(value))
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text)
}

/** Why `tool` cannot be registered for `server`, or the tool. */
function examine(server: string, tool: unknown, index: number): ListedTool | string {
  if (!isObject(tool)) return `tool #${index}: not an object`
  const { name, description, inputSchema, annotations } = tool
  if (typeof name !== 'string' || name === '') return `tool #${index}: no name`
  const hostName = mcpToolName(server, name)
  if (!HOST_TOOL_NAME.test(hostName)) {
    return `${shown(name)}: the name must be letters, digits, "_" or "-", and "${mcpToolName(server, '')}<name>" at most 64 characters`
  }
  if (!isObject(inputSchema) || inputSchema.type !== 'object') return `${shown(name)}: inputSchema is not an object JSON schema`
  if (description !== undefined && typeof description !== 'string') return `${shown(name)}: description is not a string`
  const text = description ?? ''
  return {
    serverName: name,
    name: hostName,
    description: text.length > MAX_DESCRIPTION_CHARS ? text.slice(0, MAX_DESCRIPTION_CHARS - CUT_MARKER.length) + CUT_MARKER : text,
    parameters: inputSchema,
    readOnly: isObject(annotations) && annotations.readOnlyHint === true,
  }
}

/**
 * Sorts the tools a server listed into those the host can register and those it cannot (a name
 * the host refuses, a name listed twice, a schema that is not an object schema, a description
 * that is not text). Keeps at most `MAX_TOOLS_PER_SERVER` tools; cuts descriptions longer than
 * `MAX_DESCRIPTION_CHARS`. Never throws.
 */
export function sortListing(server: string, listed: readonly unknown[]): Listing {
  const tools: ListedTool[] = []
  const skipped: string[] = []
  const seen = new Set<string>()
  const examined = Math.min(listed.length, MAX_TOOLS_PER_SERVER)
  for (let index = 0; index < examined; index++) {
    const outcome = examine(server, listed[index], index)
    if (typeof outcome === 'string') skipped.push(outcome)
    else if (seen.has(outcome.name)) skipped.push(`${shown(outcome.serverName)}: listed twice`)
    else {
      seen.add(outcome.name)
      tools.push(outcome)
    }
  }
  return { tools, skipped, cut: listed.length - examined }
}
