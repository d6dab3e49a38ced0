import { expect } from 'chai'
import type { AgentView } from '../../lib/agent-view.ts'
import type { SessionEvent } from '../../lib/types.ts'
import { type InspectorSource, InspectorServer, refusedHostMessage } from '../../plugins/inspector/index.ts'
import { fetchWithHost, openStream } from './client.ts'
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
    server = new InspectorServer(source([view('root')]), 'test')
    const url = await server.listen(0)
    const leaving = await openStream(url)
    const staying = await openStream(url)
    await Promise.all([leaving.next('snapshot'), staying.next('snapshot')])
    const forgotten = new Promise((resolve) => server.once('client-closed', resolve))
    leaving.disconnect()
    expect(await forgotten).to.equal(1)
    server.publishAgent(view('late'))
    expect(((await staying.next('agent')).data as AgentView).id).to.equal('late')
    expect(server.clientCount).to.equal(1)
    staying.disconnect()
  })

  it('delivers every message to 100 connected clients', async () => {
    server = new InspectorServer(source([]), 'test')
    const url = await server.listen(0)
    const clients = await Promise.all(Array.from({ length: 100 }, () => openStream(url, 'a')))
    await Promise.all(clients.map((client) => client.next('snapshot')))
    expect(server.clientCount).to.equal(100)
    server.publishAgent(view('a'))
    server.publishEvent('a', { seq: 0, type: 'turn/start', data: { turn: 1 } })
    const frames = await Promise.all(clients.map((client) => client.next('event')))
    expect(frames.every((frame) => (frame.data as { id: string }).id === 'a')).to.equal(true)
    const agents = await Promise.all(clients.map((client) => client.next('agent')))
    expect(agents.every((frame) => (frame.data as AgentView).id === 'a')).to.equal(true)
    for (const client of clients) client.disconnect()
  })

  it('sends an agent event only to the clients that follow that agent', async () => {
    server = new InspectorServer(source([view('a'), view('b')]), 'test')
    const url = await server.listen(0)
    const followingA = await openStream(url, 'a')
    const followingB = await openStream(url, 'b')
    const following = await openStream(url)
    await Promise.all([followingA, followingB, following].map((client) => client.next('snapshot')))
    server.publishEvent('a', { seq: 0, type: 'turn/start', data: { turn: 1 } })
    server.publishAgent(view('a'))
    expect(((await followingA.next('event')).data as { id: string }).id).to.equal('a')
    // the agent message goes out in the same write as the events of its window
    await Promise.all([followingB.next('agent'), following.next('agent')])
    expect([followingB.unread('event'), following.unread('event')]).to.deep.equal([0, 0])
    for (const client of [followingA, followingB, following]) client.disconnect()
  })

  it('sends a followed agent transcript so far right after the snapshot', async () => {
    const events: SessionEvent[] = [{ seq: 0, type: 'turn/start', data: { turn: 1 } }]
    server = new InspectorServer(source([view('a')], { a: events }), 'test')
    const client = await openStream(await server.listen(0), 'a')
    expect((await client.next('transcript')).data).to.deep.equal({ id: 'a', events })
    client.disconnect()
  })

  it('sends an agent changed twice in one flush window once, as it is when the window closes', async () => {
    server = new InspectorServer(source([view('a')]), 'test')
    const client = await openStream(await server.listen(0))
    await client.next('snapshot')
    const changing = view('a')
    server.publishAgent(changing)
    changing.status = 'running'
    server.publishAgent(changing)
    server.publishAgent(view('b'))
    expect(((await client.next('agent')).data as AgentView).status).to.equal('running')
    expect(((await client.next('agent')).data as AgentView).id).to.equal('b')
    expect(client.unread('agent')).to.equal(0)
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
})
