/**
 * The inspector's HTTP server (node:http, loopback only): `/` the page, `/events[?follow=<id>]` a
 * server-sent event stream (a `snapshot`; with `follow`, a `transcript` of that agent's events so
 * far; then `agent` messages for every tree change and `event` messages for the followed agent
 * only), `/transcript?id=` one agent's events as JSON. Any other Host header than the loopback
 * address is refused.
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

/** How long changes are gathered before they are sent: below what a reader notices. */
export const FLUSH_WINDOW_MS = 50

/** The body of a refused request (status 403). */
export const refusedHostMessage = (host: string) => `the inspector answers only on ${LOOPBACK}; Host "${host}" refused\n`

/** Emits `client-closed` (with the count left) whenever an event-stream client goes away. */
export class InspectorServer extends EventEmitter<{ 'client-closed': [remaining: number] }> {
  readonly #server: Server
  /** Each connected client and the agent whose events it follows, if any. */
  readonly #clients = new Map<ServerResponse, string | undefined>()
  /** How many clients follow each agent: events of an agent nobody follows are never queued. */
  readonly #followers = new Map<string, number>()
  #port = 0
  // the changes of one window go out as one write per client, encoded once when it closes: a busy
  // host changes agents thousands of times a second, and an agent changed twice is sent once
  readonly #changed = new Map<string, AgentView>()
  readonly #events = new Map<string, SessionEvent[]>()
  #flush: NodeJS.Timeout | undefined

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
   * Queues an `agent` message for every connected client. Within a flush window (`FLUSH_WINDOW_MS`) an
   * agent is sent once, in the state it has when the window closes. With no client, nothing is kept or encoded.
   */
  publishAgent(view: AgentView): void {
    if (!this.#clients.size) return
    this.#changed.set(view.id, view)
    this.#schedule()
  }

  /**
   * Queues an `event` message (`{id, event}`) for the clients following agent `id`, in order and
   * after the window's `agent` messages. With no follower, nothing is kept or encoded.
   */
  publishEvent(id: string, event: SessionEvent): void {
    if (!this.#followers.has(id)) return
    const queued = this.#events.get(id)
    if (queued) queued.push(event)
    else this.#events.set(id, [event])
    this.#schedule()
  }

  #schedule(): void {
    // unref: a pending window never keeps the process alive
    this.#flush ??= setTimeout(() => this.#write(), FLUSH_WINDOW_MS).unref()
  }

  #write(): void {
    this.#flush = undefined
    let agents = ''
    for (const view of this.#changed.values()) agents += frame('agent', view)
    const events = new Map<string, string>()
    for (const [id, list] of this.#events) events.set(id, list.map((event) => frame('event', { id, event })).join(''))
    this.#changed.clear()
    this.#events.clear()
    for (const [client, follow] of this.#clients) {
      const frames = agents + (follow === undefined ? '' : (events.get(follow) ?? ''))
      if (!frames) continue
      if (client.destroyed || client.writableEnded) this.#forget(client)
      else client.write(frames)
    }
  }

  /** Ends every stream and stops listening. */
  async close(): Promise<void> {
    if (this.#flush) clearTimeout(this.#flush)
    this.#flush = undefined
    this.#changed.clear()
    this.#events.clear()
    for (const client of this.#clients.keys()) client.end()
    this.#clients.clear()
    this.#followers.clear()
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
      this.#stream(response, url.searchParams.get('follow') ?? undefined)
    } else if (url.pathname === '/transcript') {
      const events = this.source.events(url.searchParams.get('id') ?? '')
      if (!events) response.writeHead(404).end()
      else response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(events))
    } else {
      response.writeHead(404).end()
    }
  }

  #stream(response: ServerResponse, follow: string | undefined): void {
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' })
    const snapshot = { agents: this.source.agents(), problems: this.source.problems() }
    let opening = frame('snapshot', snapshot)
    if (follow !== undefined) {
      opening += frame('transcript', { id: follow, events: this.source.events(follow) ?? [] })
      this.#followers.set(follow, (this.#followers.get(follow) ?? 0) + 1)
    }
    response.write(opening)
    this.#clients.set(response, follow)
    // a client that disconnects mid-stream is simply forgotten; a write error is not ours to raise
    const forget = () => {
      if (this.#forget(response)) this.emit('client-closed', this.#clients.size)
    }
    response.on('close', forget)
    response.on('error', forget)
  }

  #forget(client: ServerResponse): boolean {
    if (!this.#clients.has(client)) return false
    const follow = this.#clients.get(client)
    this.#clients.delete(client)
    if (follow !== undefined) {
      const left = (this.#followers.get(follow) ?? 1) - 1
      if (left) this.#followers.set(follow, left)
      else this.#followers.delete(follow)
    }
    return true
  }
}

function frame(type: string, data: unknown): string {
  return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`
}
