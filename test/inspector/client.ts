/**
 * A minimal event-stream client over node:http for inspector tests: reads frames as they arrive.
 */
import { get, type IncomingMessage } from 'node:http'
import { connect, Server, type Socket } from 'node:net'

export interface Frame {
  event: string
  data: unknown
}

export interface StreamClient {
  /** Resolves with the next frame whose event is `event` (frames read before are kept). */
  next(event: string): Promise<Frame>
  /** Frames of type `event` read and not yet taken by `next`. */
  unread(event: string): number
  /** Drops the connection mid-stream. */
  disconnect(): void
  closed: Promise<void>
}

/** Opens `/events`, following agent `follow`'s events when given. */
export function openStream(url: string, follow?: string): Promise<StreamClient> {
  const target = new URL('/events', url)
  if (follow !== undefined) target.searchParams.set('follow', follow)
  return new Promise((resolve, reject) => {
    const request = get(target, (response: IncomingMessage) => {
      const frames: Frame[] = []
      const waiters: { event: string; resolve: (frame: Frame) => void }[] = []
      let buffer = ''
      const deliver = () => {
        for (let i = 0; i < waiters.length; i++) {
          const index = frames.findIndex((frame) => frame.event === waiters[i]!.event)
          if (index < 0) continue
          const [frame] = frames.splice(index, 1)
          waiters.splice(i--, 1)[0]!.resolve(frame!)
        }
      }
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => {
        buffer += chunk
        let end = buffer.indexOf('\n\n')
        while (end >= 0) {
          const block = buffer.slice(0, end)
          buffer = buffer.slice(end + 2)
          const event = /^event: (.*)$/m.exec(block)?.[1] ?? 'message'
          const data = /^data: (.*)$/m.exec(block)?.[1]
          frames.push({ event, data: data === undefined ? undefined : JSON.parse(data) })
          end = buffer.indexOf('\n\n')
        }
        deliver()
      })
      const closed = new Promise<void>((done) => response.on('close', () => done()))
      resolve({
        next: (event) =>
          new Promise((done) => {
            waiters.push({ event, resolve: done })
            deliver()
          }),
        unread: (event) => frames.filter((frame) => frame.event === event).length,
        disconnect: () => request.destroy(),
        closed,
      })
    })
    request.on('error', (error) => {
      if ((error as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(error)
    })
  })
}

/** One GET with an explicit Host header; resolves with status and body. */
export function fetchWithHost(url: string, path: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const target = new URL(path, url)
    const request = get({ hostname: target.hostname, port: target.port, path: target.pathname + target.search, headers: { host } }, (response) => {
      let body = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => (body += chunk))
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }))
    })
    request.on('error', reject)
  })
}

/**
 * Sends `head` (an HTTP/1.0 request line and headers, without the blank line) over a plain socket, so a
 * target `http.get` would refuse to send reaches the server; resolves with the whole reply text.
 */
export function sendRaw(url: string, head: string): Promise<string> {
  const { hostname, port } = new URL(url)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname)
    let reply = ''
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => (reply += chunk))
    socket.on('end', () => resolve(reply))
    socket.on('error', reject)
    socket.end(`${head}\r\n\r\n`)
  })
}

/** Opens `path` over a plain socket and never reads the reply: a client that stopped reading. */
export function openStalled(url: string, path: string): Socket {
  const { hostname, port, host } = new URL(url)
  const socket = connect(Number(port), hostname)
  socket.pause()
  socket.on('error', () => undefined)
  socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\n\r\n`)
  return socket
}

/** The process's listening server on 127.0.0.1:`port`. */
export function listeningServer(port: number): Server {
  const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles()
  const found = handles.find((handle): handle is Server => {
    if (!(handle instanceof Server)) return false
    const address = handle.address()
    return typeof address === 'object' && address?.port === port
  })
  if (!found) throw new Error(`no server listens on port ${port}`)
  return found
}
