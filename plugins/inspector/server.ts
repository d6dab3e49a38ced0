/**
 * The inspector's HTTP server (node:http, loopback only): `/` the page, `/events[?follow=<id>]` a
 * server-sent event stream (a `snapshot`; with `follow`, a `transcript` of that agent's events so
 * far; then, once per flush window, `agent` messages for every tree change and `event` messages
 * for the followed agent only), `/transcript?id=` one agent's events as JSON. Any other Host
 * header than the loopback address is refused. With an approval desk, the snapshot also lists the
 * pending approval requests, `approval` / `approval-decided` messages follow them live, and
 * `POST /approvals/decide` takes the page's decisions (`decision-route.ts`).
 */
import { EventEmitter } from 'node:events'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { AgentView } from '../../lib/session/agent-view.ts'
import type { SessionEvent } from '../../lib/types.ts'
import type { ApprovalDesk } from './approval-desk.ts'
import { DECISION_METHOD, DECISION_PATH, handleDecision, newSecret } from './decision-route.ts'
import { inspectorPage } from './page.ts'

/**
 * What the server shows: the agents, each one's events, and problems met reading them. A live
 * source also has `changed()`: the server reads it once per flush window while a client is
 * connected, and reads each followed agent's `events(id)` from where that client left off, so a
 * source never pushes and a followed agent's events are never queued twice.
 */
export interface InspectorSource {
  agents(): AgentView[]
  /**
   * The agent's events so far; for a live agent the list may grow between reads (append only).
   * The same list object while the agent's session is the same one: a new list (an agent resumed
   * after its disposal) is sent to its followers whole, as a fresh `transcript`.
   */
  events(id: string): readonly SessionEvent[] | undefined
  problems(): string[]
  /** Views changed since the previous call, each once; absent for a source that never changes. */
  changed?(): AgentView[]
}

export const LOOPBACK = '127.0.0.1'

/** How often a live source is read while a client is connected: below what a reader notices. */
export const FLUSH_WINDOW_MS = 50

/** The body of a refused request (status 403). */
export const refusedHostMessage = (host: string) => `the inspector answers only on ${LOOPBACK}; Host "${host}" refused\n`

/** The body of a request whose target is not a URL path (status 400). */
export const badTargetMessage = 'the inspector could not read the request target\n'

/** Bytes an event-stream client may leave unread before the server cuts it off (default). */
export const MAX_UNREAD_BYTES = 64 * 1024 * 1024

export interface InspectorServerOptions {
  /** A client with more than this many bytes written to it and not yet read is disconnected. */
  maxUnreadBytes?: number
  /** Pending approval requests to show, and where the page's decisions go (a live host's). */
  approvals?: ApprovalDesk
}

/**
 * Emits `client-closed` (with the count left) whenever an event-stream client goes away, and
 * `server-error` for an error of the listening socket once it listens (the server keeps listening).
 */
export class InspectorServer extends EventEmitter<{ 'client-closed': [remaining: number]; 'server-error': [error: Error] }> {
  readonly #server: Server
  /** Each connected client: the agent it follows, if any, the list it reads and how many of its events it has. */
  readonly #clients = new Map<ServerResponse, FollowState>()
  #port = 0
  // one read of the source per window, encoded once and written once per client: a busy host
  // changes agents thousands of times a second, and an agent changed twice is sent once
  #ticker: NodeJS.Timeout | undefined

  readonly #maxUnreadBytes: number
  readonly #desk: ApprovalDesk | undefined
  /** Embedded in the page; a decision without it is refused. */
  readonly #secret = newSecret()
  readonly #unwatchDesk: () => void

  constructor(
    private readonly source: InspectorSource,
    private readonly title: string,
    options: InspectorServerOptions = {},
  ) {
    super()
    this.#maxUnreadBytes = options.maxUnreadBytes ?? MAX_UNREAD_BYTES
    this.#desk = options.approvals
    this.#unwatchDesk = this.#desk ? this.#watchDesk(this.#desk) : () => {}
    this.#server = createServer((request, response) => this.#handle(request, response))
    // Node reports a connection libuv failed to accept (EMFILE, ENFILE, ENOMEM) as an 'error' of
    // the listening server, which ends the process when nobody listens: the host must not die for
    // its inspector page. The server keeps listening; `listen` still rejects on its own errors
    this.#server.on('error', (error) => {
      if (this.#server.listening) this.emit('server-error', error)
    })
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
   * Sends every client the `agent` messages of the source's changes, then each following client
   * the `event` messages of its agent's events it does not have yet. Each text is encoded once.
   */
  #write(): void {
    const changed = this.source.changed?.()
    let agents = ''
    if (changed) for (const view of changed) agents += frame('agent', view)
    const encoded = new Map<string, string>()
    for (const [client, state] of this.#clients) {
      if (client.destroyed || client.writableEnded) {
        this.#forget(client)
        continue
      }
      // a client that stopped reading (a suspended process, a frozen tab) would have the host buffer
      // every later frame for it, without end: it is cut off instead (its 'close' forgets it), and a
      // page's EventSource reconnects to a fresh snapshot
      if (client.writableLength > this.#maxUnreadBytes) {
        client.destroy()
        continue
      }
      let frames = agents
      const events = state.follow === undefined ? undefined : this.source.events(state.follow)
      if (events && state.log && events !== state.log) {
        // the agent was resumed after its disposal: its old list's counts say nothing of the new one
        frames += frame('transcript', { id: state.follow, events })
        state.sent = events.length
      } else if (events && events.length > state.sent) {
        const key = `${state.sent} ${state.follow}`
        let text = encoded.get(key)
        if (text === undefined) {
          text = ''
          for (let i = state.sent; i < events.length; i++) text += frame('event', { id: state.follow, event: events[i] })
          encoded.set(key, text)
        }
        frames += text
        state.sent = events.length
      }
      if (events) state.log = events
      if (frames) client.write(frames)
    }
  }

  /** Approval changes reach every client at once: they are rare, and a person waits on them. */
  #watchDesk(desk: ApprovalDesk): () => void {
    const broadcast = (type: string, data: unknown) => {
      const text = frame(type, data)
      for (const client of this.#clients.keys()) if (!client.destroyed && !client.writableEnded) client.write(text)
    }
    const asked = (request: unknown) => broadcast('approval', request)
    const decided = (view: unknown) => broadcast('approval-decided', view)
    desk.on('asked', asked)
    desk.on('decided', decided)
    return () => {
      desk.off('asked', asked)
      desk.off('decided', decided)
    }
  }

  /** Ends every stream and stops listening. */
  async close(): Promise<void> {
    this.#unwatchDesk()
    this.#stopTicker()
    for (const client of this.#clients.keys()) client.end()
    this.#clients.clear()
    this.#server.closeAllConnections()
    await new Promise<void>((resolve) => this.#server.close(() => resolve()))
  }

  /** The origins of the page as a browser loads it: the two names `#isLoopbackHost` accepts. */
  #origins(): string[] {
    return [`http://${LOOPBACK}:${this.#port}`, `http://localhost:${this.#port}`]
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
    // the HTTP parser lets targets through that `URL` rejects (`//[`): a throw here would be uncaught
    // and end the host process, so it is answered like any other bad request
    const target = request.url ?? '/'
    if (!URL.canParse(target, this.url)) {
      response.writeHead(400, { 'content-type': 'text/plain; charset=utf-8' }).end(badTargetMessage)
      return
    }
    const url = new URL(target, this.url)
    if (url.pathname === DECISION_PATH && this.#desk) {
      if (request.method === DECISION_METHOD) handleDecision(request, response, this.#desk, this.#secret, this.#origins())
      else response.writeHead(405, { allow: DECISION_METHOD }).end()
    } else if (request.method !== 'GET') {
      response.writeHead(405, { allow: 'GET' }).end()
    } else if (url.pathname === '/') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(inspectorPage(this.title, this.#desk && { secret: this.#secret }))
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
    // the clients already connected get everything up to now first: the snapshot then starts
    // exactly where their streams are, and changes it already holds are not sent to it again
    this.#write()
    const snapshot = { agents: this.source.agents(), problems: this.source.problems() }
    let opening = frame('snapshot', this.#desk ? { ...snapshot, approvals: this.#desk.pending() } : snapshot)
    let sent = 0
    let log: readonly SessionEvent[] | undefined
    if (follow !== undefined) {
      log = this.source.events(follow)
      const events = log ?? []
      opening += frame('transcript', { id: follow, events })
      sent = events.length
    }
    response.write(opening)
    this.#clients.set(response, { follow, sent, log })
    // unref: an open page never keeps the process alive
    if (this.source.changed) this.#ticker ??= setInterval(() => this.#write(), FLUSH_WINDOW_MS).unref()
    // a client that disconnects mid-stream is simply forgotten; a write error is not ours to raise
    const forget = () => {
      if (this.#forget(response)) this.emit('client-closed', this.#clients.size)
    }
    response.on('close', forget)
    response.on('error', forget)
  }

  #forget(client: ServerResponse): boolean {
    if (!this.#clients.delete(client)) return false
    if (!this.#clients.size) this.#stopTicker()
    return true
  }

  #stopTicker(): void {
    if (this.#ticker) clearInterval(this.#ticker)
    this.#ticker = undefined
  }
}

/** What the server keeps per event-stream client. */
interface FollowState {
  follow: string | undefined
  sent: number
  /** The followed agent's list `sent` counts in; `undefined` until the agent has one. */
  log: readonly SessionEvent[] | undefined
}

function frame(type: string, data: unknown): string {
  return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`
}
