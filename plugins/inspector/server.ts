/**
 * The inspector's HTTP server (node:http, loopback only): `/` the page, `/events` a server-sent
 * event stream (a `snapshot`, then `agent` and `event` messages as they happen), `/transcript?id=`
 * one agent's events as JSON. Any other Host header than the loopback address is refused.
 */
import { EventEmitter } from 'node:events'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { AgentView } from '../../lib/agent-view.ts'
import type { SessionEvent } from '../../lib/types.ts'
import { inspectorPage } from './page.ts'

/** What the server shows: the agents, each one's events, and problems met reading them. */
export interface InspectorSource {
  agents(): AgentView[]
  events(id: string): readonly SessionEvent[] | undefined
  problems(): string[]
}

export const LOOPBACK = '127.0.0.1'

/** The body of a refused request (status 403). */
export const refusedHostMessage = (host: string) => `the inspector answers only on ${LOOPBACK}; Host "${host}" refused\n`

/** Emits `client-closed` (with the count left) whenever an event-stream client goes away. */
export class InspectorServer extends EventEmitter<{ 'client-closed': [remaining: number] }> {
  readonly #server: Server
  readonly #clients = new Set<ServerResponse>()
  #port = 0
  // frames of one tick go out as one write per client: a turn appends several events at once
  #pending = ''
  #flush: NodeJS.Immediate | undefined

  constructor(private readonly source: InspectorSource, private readonly title: string) {
    super()
    this.#server = createServer((request, response) => this.#handle(request, response))
  }

  /** Listens on 127.0.0.1 (`port` 0: any free port). Rejects when the port is taken. */
  listen(port: number): Promise<string> {
    return new Promise((resolve, reject) => {
      this.#server.once('error', reject)
      this.#server.listen(port, LOOPBACK, () => {
        this.#server.off('error', reject)
        this.#port = (this.#server.address() as AddressInfo).port
        resolve(this.url)
      })
    })
  }

  get url(): string {
    return `http://${LOOPBACK}:${this.#port}/`
  }

  /** Connected event-stream clients. */
  get clientCount(): number {
    return this.#clients.size
  }

  /**
   * Queues one message for every connected client; the queue is written at the end of the tick,
   * in order. A client that went away is dropped. With no client, nothing is encoded.
   */
  broadcast(type: 'agent' | 'event', data: unknown): void {
    if (!this.#clients.size) return
    this.#pending += `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`
    this.#flush ??= setImmediate(() => this.#write())
  }

  #write(): void {
    const frames = this.#pending
    this.#pending = ''
    this.#flush = undefined
    for (const client of this.#clients) {
      if (client.destroyed || client.writableEnded) this.#clients.delete(client)
      else client.write(frames)
    }
  }

  /** Ends every stream and stops listening. */
  async close(): Promise<void> {
    if (this.#flush) clearImmediate(this.#flush)
    this.#flush = undefined
    this.#pending = ''
    for (const client of this.#clients) client.end()
    this.#clients.clear()
    this.#server.closeAllConnections()
    await new Promise<void>((resolve) => this.#server.close(() => resolve()))
  }

  #isLoopbackHost(host: string | undefined): boolean {
    return host === `${LOOPBACK}:${this.#port}` || host === `localhost:${this.#port}`
  }

  #handle(request: IncomingMessage, response: ServerResponse): void {
    // a DNS-rebinding page reaches 127.0.0.1 under its own name: only our own names are served
    const host = request.headers.host
    if (!this.#isLoopbackHost(host)) {
      response.writeHead(403, { 'content-type': 'text/plain; charset=utf-8' }).end(refusedHostMessage(String(host ?? '')))
      return
    }
    const url = new URL(request.url ?? '/', this.url)
    if (request.method !== 'GET') {
      response.writeHead(405, { allow: 'GET' }).end()
    } else if (url.pathname === '/') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(inspectorPage(this.title))
    } else if (url.pathname === '/events') {
      this.#stream(response)
    } else if (url.pathname === '/transcript') {
      const events = this.source.events(url.searchParams.get('id') ?? '')
      if (!events) response.writeHead(404).end()
      else response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(events))
    } else {
      response.writeHead(404).end()
    }
  }

  #stream(response: ServerResponse): void {
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' })
    const snapshot = { agents: this.source.agents(), problems: this.source.problems() }
    response.write(`event: snapshot\ndata: ${JSON.stringify(snapshot)}\n\n`)
    this.#clients.add(response)
    // a client that disconnects mid-stream is simply forgotten; a write error is not ours to raise
    const forget = () => {
      if (this.#clients.delete(response)) this.emit('client-closed', this.#clients.size)
    }
    response.on('close', forget)
    response.on('error', forget)
  }
}
