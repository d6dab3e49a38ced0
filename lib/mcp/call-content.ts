/**
 * What an MCP `tools/call` result becomes for the host (SPEC §13): text content as text blocks,
 * any other content as one line describing it, `structuredContent` as the result's value. Pure.
 */
import type { TextBlock } from '../types.ts'

/** The parts of a call result the host keeps. */
export interface CallOutcome {
  readonly isError: boolean
  readonly content: TextBlock[]
  /** `structuredContent`, when the server sent an object. */
  readonly value?: Record<string, unknown>
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Bytes a base64 text decodes to (padding and line breaks aside). */
export function base64Bytes(data: string): number {
  const clean = data.replace(/[\s=]/g, '')
  return Math.floor((clean.length * 3) / 4)
}

function bytes(count: number): string {
  return `${count} ${count === 1 ? 'byte' : 'bytes'}`
}

/** `a, b` of the parts that are present. */
function parts(...items: (string | undefined)[]): string {
  return items.filter((item): item is string => typeof item === 'string' && item !== '').join(', ')
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined
}

/**
 * One line describing a content block that is not text: `[image: image/png, 1204 bytes]`,
 * `[audio: audio/wav, 88 bytes]`, `[resource link: file:///a.txt, text/plain]`,
 * `[resource: file:///b.bin, application/octet-stream, 512 bytes]` (an embedded one; its size in
 * characters when it holds text), `[<type> content]` for a type this code does not know.
 */
export function describeContent(block: Record<string, unknown>): string {
  const type = typeof block.type === 'string' ? block.type : 'unknown'
  switch (type) {
    case 'image':
    case 'audio': {
      const data = text(block.data)
      return `[${type}: ${parts(text(block.mimeType) ?? 'unknown type', data === undefined ? undefined : bytes(base64Bytes(data)))}]`
    }
    case 'resource_link':
      return `[resource link: ${parts(text(block.uri) ?? 'no uri', text(block.mimeType))}]`
    case 'resource': {
      const resource = isObject(block.resource) ? block.resource : {}
      const body = text(resource.text)
      const blob = text(resource.blob)
      const size = body !== undefined ? `${body.length} characters` : blob !== undefined ? bytes(base64Bytes(blob)) : undefined
      return `[resource: ${parts(text(resource.uri) ?? 'no uri', text(resource.mimeType), size)}]`
    }
    default:
      return `[${type} content]`
  }
}

/**
 * The host's view of a `tools/call` result (any value: checked here, never trusted). A result that
 * is not an object, or whose `content` is not a list, is described as an empty success unless
 * `isError` is set; blocks that are not objects are left out.
 */
export function callOutcome(result: unknown): CallOutcome {
  const record = isObject(result) ? result : {}
  const blocks = Array.isArray(record.content) ? record.content : []
  const content: TextBlock[] = []
  for (const block of blocks) {
    if (!isObject(block)) continue
    if (block.type === 'text' && typeof block.text === 'string') content.push({ type: 'text', text: block.text })
    else content.push({ type: 'text', text: describeContent(block) })
  }
  const isError = record.isError === true
  return isObject(record.structuredContent) && !isError ? { isError, content, value: record.structuredContent } : { isError, content }
}
