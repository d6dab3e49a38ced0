/**
 * A real chat-completions server on 127.0.0.1 (port 0) for adapter tests: it records every
 * request and lets each test answer with SSE chunks, an HTTP error, or nothing at all.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { JsonValue } from '../../lib/types.ts'

export interface RecordedRequest {
  method: string
  url: string
  headers: IncomingHttpHeaders
  body: { [key: string]: JsonValue }
}

export type ChatHandler = (request: RecordedRequest, response: ServerResponse) => void

export interface ChatServer {
  /** Pass as `baseURL`. */
  readonly baseURL: string
  readonly requests: RecordedRequest[]
  /** Resolves when the next request has been read (or at once if one already was). */
  nextRequest(): Promise<RecordedRequest>
  close(): Promise<void>
}

export async function startChatServer(handler: ChatHandler): Promise<ChatServer> {
  const requests: RecordedRequest[] = []
  const waiting: ((request: RecordedRequest) => void)[] = []
  let delivered = 0
  const server = createServer((incoming, response) => {
    const pieces: Buffer[] = []
    incoming.on('data', (piece: Buffer) => pieces.push(piece))
    incoming.on('end', () => {
      const text = Buffer.concat(pieces).toString('utf8')
      const recorded: RecordedRequest = {
        method: incoming.method ?? '',
        url: incoming.url ?? '',
        headers: incoming.headers,
        body: text ? (JSON.parse(text) as { [key: string]: JsonValue }) : {},
      }
      requests.push(recorded)
      const resolve = waiting.shift()
      if (resolve) {
        delivered++
        resolve(recorded)
      }
      handler(recorded, response)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    nextRequest() {
      if (delivered < requests.length) return Promise.resolve(requests[delivered++]!)
      return new Promise((resolve) => waiting.push(resolve))
    },
    close() {
      server.closeAllConnections()
      return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())))
    },
  }
}

/** Opens an SSE response (status 200) without ending it. */
export function openStream(response: ServerResponse): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
  response.flushHeaders()
}

export function writeChunk(response: ServerResponse, chunk: JsonValue): void {
  response.write(`data: ${JSON.stringify(chunk)}\n\n`)
}

/** Streams every chunk, then `data: [DONE]` unless `done` is false, and ends the response. */
export function sendStream(response: ServerResponse, chunks: readonly JsonValue[], done = true): void {
  openStream(response)
  for (const chunk of chunks) writeChunk(response, chunk)
  if (done) response.write('data: [DONE]\n\n')
  response.end()
}

export function sendError(response: ServerResponse, status: number, body?: JsonValue | string): void {
  if (body === undefined) {
    response.writeHead(status).end()
  } else if (typeof body === 'string') {
    response.writeHead(status, { 'content-type': 'text/plain' }).end(body)
  } else {
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
  }
}

type Delta = { [key: string]: JsonValue }

/** One chat.completion.chunk with a single choice. */
export function chunk(delta: Delta, finishReason: string | null = null): JsonValue {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'test-model',
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  }
}

export function textChunk(text: string): JsonValue {
  return chunk({ content: text })
}

export function finishChunk(reason: string): JsonValue {
  return chunk({}, reason)
}

/** The final usage-only chunk `stream_options.include_usage` asks for. */
export function usageChunk(promptTokens: number, completionTokens: number): JsonValue {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'test-model',
    choices: [],
    usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
  }
}

export function toolChunk(pieces: { index: number; id?: string; name?: string; arguments?: string }[]): JsonValue {
  return chunk({
    tool_calls: pieces.map(({ index, id, name, arguments: args }) => {
      const piece: Delta = { index }
      if (id !== undefined) {
        piece.id = id
        piece.type = 'function'
      }
      const fn: Delta = {}
      if (name !== undefined) fn.name = name
      if (args !== undefined) fn.arguments = args
      piece.function = fn
      return piece
    }),
  })
}
