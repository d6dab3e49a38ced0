import { expect } from 'chai'
import type { AgentView } from '../../lib/session/agent-view.ts'
import type { SessionEvent } from '../../lib/types.ts'
import { badTargetMessage, type InspectorSource, InspectorServer, refusedHostMessage } from '../../plugins/inspector/index.ts'
import { fetchWithHost, listeningServer, openStalled, openStream, sendRaw } from './client.ts'
import '../support/unhandled.ts'

function view(id: string, parentId?: string): AgentView {
  return {
    id,
    ...(parentId ? { parentId } : {}),
    mode: parentId ? 'spawn' : 'root',
    depth: parentId ? 1 : 0,
    status: 'idle',
    usage: { inputTokens: 0, outputTokens: 0 },
    startedAt: 1,
  }
}

function source(agents: AgentView[], events: Record<string, SessionEvent[]> = {}): InspectorSource {
  return { agents: () => agents, events: (id) => events[id], problems: () => [] }
}

/** A source that changes: `change` marks a view changed, `append` grows an agent's events. */
function liveSource(agents: AgentView[] = []) {
  const logs = new Map<string, SessionEvent[]>()
  const changed: AgentView[] = []
  const live: InspectorSource = {
    agents: () => agents,
    events: (id) => logs.get(id),
    problems: () => [],
    changed: () => changed.splice(0),
  }
  return {
    live,
    change(view: AgentView) {
      changed.push(view)
    },
    append(id: string, type: string) {
      const events = logs.get(id) ?? []
      logs.set(id, events)
      events.push({ seq: events.length, type, data: {} })
    },
  }
}

describe('InspectorServer', () => {
  let server: InspectorServer

  afterEach(() => server.close())

  it('listens on 127.0.0.1 only', async () => {
    server = new InspectorServer(source([]), 'test')
    expect(await server.listen(0)).to.match(/^http:\/\/127\.0\.0\.1:\d+\/$/)
  })

  it('refuses a request whose Host is not the loopback address', async () => {
    server = new InspectorServer(source([]), 'test')
    const url = await server.listen(0)
    const refused = await fetchWithHost(url, '/', 'evil.example:80')
    expect(refused).to.deep.equal({ status: 403, body: refusedHostMessage('evil.example:80') })
    const port = new URL(url).port
    expect((await fetchWithHost(url, '/', `127.0.0.1:${port}`)).status).to.equal(200)
    expect((await fetchWithHost(url, '/', `localhost:${port}`)).status).to.equal(200)
  })

  it('forgets a client that disconnects mid-stream and keeps serving the others', async () => {
    const source = liveSource([view('root')])
    server = new InspectorServer(source.live, 'test')
    const url = await server.listen(0)
    const leaving = await openStream(url)
    const staying = await openStream(url)
    await Promise.all([leaving.next('snapshot'), staying.next('snapshot')])
    const forgotten = new Promise((resolve) => server.once('client-closed', resolve))
    leaving.disconnect()
    expect(await forgotten).to.equal(1)
    source.change(view('late'))
    expect(((await staying.next('agent')).data as AgentView).id).to.equal('late')
    expect(server.clientCount).to.equal(1)
    staying.disconnect()
  })

  it('delivers every message to 100 connected clients', async () => {
    const source = liveSource()
    server = new InspectorServer(source.live, 'test')
    const url = await server.listen(0)
    const clients = await Promise.all(Array.from({ length: 100 }, () => openStream(url, 'a')))
    await Promise.all(clients.map((client) => client.next('snapshot')))
    expect(server.clientCount).to.equal(100)
    source.change(view('a'))
    source.append('a', 'turn/start')
    const frames = await Promise.all(clients.map((client) => client.next('event')))
    expect(frames.every((frame) => (frame.data as { id: string }).id === 'a')).to.equal(true)
    const agents = await Promise.all(clients.map((client) => client.next('agent')))
    expect(agents.every((frame) => (frame.data as AgentView).id === 'a')).to.equal(true)
    for (const client of clients) client.disconnect()
  })

  it('sends an agent event only to the clients that follow that agent', async () => {
    const source = liveSource([view('a'), view('b')])
    server = new InspectorServer(source.live, 'test')
    const url = await server.listen(0)
    const followingA = await openStream(url, 'a')
    const followingB = await openStream(url, 'b')
    const following = await openStream(url)
    await Promise.all([followingA, followingB, following].map((client) => client.next('snapshot')))
    source.append('a', 'turn/start')
    source.change(view('a'))
    expect(((await followingA.next('event')).data as { id: string }).id).to.equal('a')
    // the agent message goes out in the same write as the events of its window
    await Promise.all([followingB.next('agent'), following.next('agent')])
    expect([followingB.unread('event'), following.unread('event')]).to.deep.equal([0, 0])
    for (const client of [followingA, followingB, following]) client.disconnect()
  })

  it('sends a follower each event once: in its transcript when it came before the client, as an event after', async () => {
    const source = liveSource([view('a')])
    server = new InspectorServer(source.live, 'test')
    const url = await server.listen(0)
    const early = await openStream(url, 'a')
    await early.next('transcript')
    source.append('a', 'turn/start')
    await early.next('event')
    const late = await openStream(url, 'a')
    const seqs = (frame: { data: unknown }) => (frame.data as { events: SessionEvent[] }).events.map((event) => event.seq)
    expect(seqs(await late.next('transcript'))).to.deep.equal([0])
    source.append('a', 'turn/end')
    const [toEarly, toLate] = await Promise.all([early.next('event'), late.next('event')])
    expect([(toEarly.data as { event: SessionEvent }).event.seq, (toLate.data as { event: SessionEvent }).event.seq]).to.deep.equal([1, 1])
    expect([early.unread('event'), late.unread('event')]).to.deep.equal([0, 0])
    early.disconnect()
    late.disconnect()
  })

  it("sends a follower the whole new transcript when its agent's event list is replaced (resumed after its disposal)", async () => {
    const source = liveSource([view('a')])
    source.append('a', 'turn/start')
    source.append('a', 'turn/end')
    server = new InspectorServer(source.live, 'test')
    const client = await openStream(await server.listen(0), 'a')
    await client.next('transcript')
    const resumed: SessionEvent[] = [
      { seq: 0, type: 'turn/start', data: {} },
      { seq: 1, type: 'turn/end', data: {} },
      { seq: 2, type: 'turn/start', data: {} },
    ]
    source.live.events = (id) => (id === 'a' ? resumed : undefined)
    source.change(view('a'))
    await client.next('agent')
    // a later window's frame: everything the window of the change wrote has arrived by then
    source.change(view('b'))
    await client.next('agent')
    expect([client.unread('transcript'), client.unread('event')]).to.deep.equal([1, 0])
    expect((await client.next('transcript')).data).to.deep.equal({ id: 'a', events: resumed })
    client.disconnect()
  })

  it('sends a followed agent transcript so far right after the snapshot', async () => {
    const events: SessionEvent[] = [{ seq: 0, type: 'turn/start', data: { turn: 1 } }]
    server = new InspectorServer(source([view('a')], { a: events }), 'test')
    const client = await openStream(await server.listen(0), 'a')
    expect((await client.next('transcript')).data).to.deep.equal({ id: 'a', events })
    client.disconnect()
  })

  it('sends a 1,000-agent tree in its first snapshot', async () => {
    const agents = [view('root'), ...Array.from({ length: 999 }, (_, i) => view(`child-${i}`, 'root'))]
    server = new InspectorServer(source(agents), 'test')
    const client = await openStream(await server.listen(0))
    const snapshot = (await client.next('snapshot')).data as { agents: AgentView[] }
    expect(snapshot.agents).to.have.length(1000)
    client.disconnect()
  })

  it('serves one agent transcript as JSON and 404 for an unknown one', async () => {
    const events = { a: [{ seq: 0, type: 'turn/start', data: { turn: 1, trigger: 'message' } }] as SessionEvent[] }
    server = new InspectorServer(source([view('a')], events), 'test')
    const url = await server.listen(0)
    const host = new URL(url).host
    const found = await fetchWithHost(url, '/transcript?id=a', host)
    expect(JSON.parse(found.body)).to.deep.equal(events.a)
    expect((await fetchWithHost(url, '/transcript?id=zzz', host)).status).to.equal(404)
  })

  it('answers 400 to a request target that is not a URL path and keeps serving', async () => {
    server = new InspectorServer(source([view('a')]), 'test')
    const url = await server.listen(0)
    const host = new URL(url).host
    const reply = await sendRaw(url, `GET //[ HTTP/1.0\r\nHost: ${host}`)
    expect(reply.split('\r\n')[0]).to.equal('HTTP/1.1 400 Bad Request')
    expect(reply.slice(reply.indexOf('\r\n\r\n') + 4)).to.equal(badTargetMessage)
    expect((await fetchWithHost(url, '/', host)).status).to.equal(200)
  })

  it('keeps serving when its listening socket reports an accept error, and reports it as server-error', async () => {
    server = new InspectorServer(source([view('a')]), 'test')
    const url = await server.listen(0)
    const host = new URL(url).host
    const reported: unknown[] = []
    server.on('server-error', (error) => reported.push(error))
    // what Node's net module does when libuv fails to accept a connection (EMFILE, ENFILE, ENOMEM):
    // an 'error' event on the listening server, which ends the process when nobody listens
    const failure = Object.assign(new Error('accept EMFILE'), { code: 'EMFILE' })
    expect(listeningServer(Number(new URL(url).port)).emit('error', failure)).to.equal(true)
    expect(reported).to.deep.equal([failure])
    expect((await fetchWithHost(url, '/', host)).status).to.equal(200)
  })

  it('disconnects a client that leaves more than maxUnreadBytes unread and keeps serving the others', async () => {
    const text = 'x'.repeat(1024 * 1024)
    const events = Array.from({ length: 12 }, (_, seq): SessionEvent => ({ seq, type: 'assistant/delta', data: { turn: 1, step: 1, text } }))
    const source = liveSource([view('a')])
    source.live.events = (id) => (id === 'a' ? events : undefined)
    server = new InspectorServer(source.live, 'test', { maxUnreadBytes: 1024 * 1024 })
    const url = await server.listen(0)
    const reading = await openStream(url)
    await reading.next('snapshot')
    const forgotten = new Promise((resolve) => server.once('client-closed', resolve))
    const stalled = openStalled(url, '/events?follow=a')
    expect(await forgotten).to.equal(1)
    source.change(view('late'))
    expect(((await reading.next('agent')).data as AgentView).id).to.equal('late')
    stalled.destroy()
    reading.disconnect()
  })
})
