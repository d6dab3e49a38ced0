/**
 * The demo's MCP server: read-only notes over stdio, written with the official SDK's server API.
 * `node --import tsx demo/mcp/notes-server.ts <folder>` serves the `.md` files of `<folder>`
 * (default: `notes/` beside this file) with two tools, `search` and `read`. No network, no writes.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { basename, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { CallToolRequestSchema, type CallToolResult, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'

const folder = resolve(process.argv[2] ?? fileURLToPath(new URL('./notes/', import.meta.url)))

/** The notes, by file name, read once: the server only reads. */
const notes = new Map(
  readdirSync(folder)
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => [name, readFileSync(join(folder, name), 'utf8')] as const),
)

const TOOLS = [
  {
    name: 'search',
    description: 'Finds the lines of the project notes that contain a text; each hit is "<note>:<line>: <text>".',
    inputSchema: { type: 'object', properties: { query: { type: 'string', description: 'The text to find.' } }, required: ['query'] },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'read',
    description: `Returns one note whole. Notes: ${[...notes.keys()].join(', ')}.`,
    inputSchema: { type: 'object', properties: { name: { type: 'string', enum: [...notes.keys()] } }, required: ['name'] },
    annotations: { readOnlyHint: true },
  },
]

function text(value: string, isError = false): CallToolResult {
  return { content: [{ type: 'text', text: value }], ...(isError ? { isError } : {}) }
}

function search(query: string): CallToolResult {
  const hits: string[] = []
  for (const [name, body] of notes) {
    body.split('\n').forEach((line, index) => {
      if (line.includes(query)) hits.push(`${name}:${index + 1}: ${line.trim()}`)
    })
  }
  return text(hits.length ? hits.join('\n') : `no note mentions ${JSON.stringify(query)}`)
}

const server = new Server({ name: 'demo-notes', version: '1.0.0' }, { capabilities: { tools: {} } })
server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: TOOLS }))
server.setRequestHandler(CallToolRequestSchema, (request) => {
  const args = request.params.arguments ?? {}
  switch (request.params.name) {
    case 'search':
      return search(String(args.query ?? ''))
    case 'read': {
      const body = notes.get(basename(String(args.name ?? '')))
      return body === undefined ? text(`no note named ${JSON.stringify(args.name)}`, true) : text(body)
    }
    default:
      return text(`unknown tool ${JSON.stringify(request.params.name)}`, true)
  }
})
await server.connect(new StdioServerTransport())
