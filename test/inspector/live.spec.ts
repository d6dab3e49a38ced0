import { expect } from 'chai'
import type { Fiber } from 'cordis'
import type { AgentView } from '../../lib/session/agent-view.ts'
import Inspector, { serverErrorMessage } from '../../plugins/inspector/index.ts'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import { createHost, type Snapshot, type TestHost } from '../support/harness.ts'
import { listeningServer, openStream } from './client.ts'
import '../support/unhandled.ts'

/** Listeners per event name on the root's table. */
function listenerCounts(host: TestHost): Record<string, number> {
  const hooks = (host.root.events as unknown as { _hooks: Record<string, unknown[]> })._hooks
  return Object.fromEntries(Object.keys(hooks).map((name) => [name, hooks[name]!.length]))
}

describe('Inspector plugin', () => {
  let host: TestHost
  let fiber: Fiber
  let baseline: Snapshot

  beforeEach(async () => {
    host = await createHost()
    await host.root.plugin(InProcessRun)
    baseline = host.snapshot()
    fiber = host.root.plugin(Inspector, {})
    await fiber
  })

  afterEach(async () => {
    await fiber.dispose()
    await host.root.agents.disposeAll()
  })

  it('streams a child run as it happens: its view to every client, its events to a client following it', async () => {
    const parent = await host.agent()
    const client = await openStream(host.root.inspector.url)
    const snapshot = (await client.next('snapshot')).data as { agents: AgentView[] }
    expect(snapshot.agents.map((agent) => agent.id)).to.deep.equal([parent.id])
    host.scripted.push({ text: '<script>alert(1)</script>', usage: { inputTokens: 3, outputTokens: 1 } })
    const run = await host.root.inprocessRun.spawn({ parent, prompt: 'go', label: 'kid', signal: new AbortController().signal })
    // whatever already happened comes in the transcript, the rest as events
    const follower = await openStream(host.root.inspector.url, run.id)
    const seen = ((await follower.next('transcript')).data as { events: { type: string; data: { text?: string } }[] }).events
    while (seen.at(-1)?.type !== 'turn/end') seen.push(((await follower.next('event')).data as { event: (typeof seen)[number] }).event)
    expect(seen.filter((event) => event.type === 'assistant/delta').map((event) => event.data.text)).to.deep.equal(['<script>alert(1)</script>'])
    await run.result
    let last: AgentView | undefined
    while (last?.stopReason !== 'completed') last = (await client.next('agent')).data as AgentView
    expect(last).to.include({ id: run.id, label: 'kid', mode: 'spawn', depth: 1, status: 'idle', stopReason: 'completed' })
    expect(last.usage).to.deep.equal({ inputTokens: 3, outputTokens: 1 })
    expect(client.unread('event')).to.equal(0)
    client.disconnect()
    follower.disconnect()
    await run.dispose()
  })

  it('listens to no session event: a host cycle pays it one call per created agent and one per settled run', async () => {
    const loaded = listenerCounts(host)
    await fiber.dispose()
    const unloaded = listenerCounts(host)
    const added = Object.keys(loaded).filter((name) => loaded[name] !== unloaded[name])
    expect(Object.fromEntries(added.map((name) => [name, loaded[name]! - (unloaded[name] ?? 0)]))).to.deep.equal({
      'agent/created': 1,
      'subagent/end': 1,
    })
  })

  it('logs an accept error of its listening socket and keeps serving the page', async () => {
    const { url } = host.root.inspector
    const failure = Object.assign(new Error('accept EMFILE'), { code: 'EMFILE' })
    listeningServer(Number(new URL(url).port)).emit('error', failure)
    expect(host.logged()).to.include(serverErrorMessage('accept EMFILE'))
    expect(serverErrorMessage('accept EMFILE')).to.equal("inspector: the server's socket failed (accept EMFILE); still listening")
    const client = await openStream(url)
    await client.next('snapshot')
    client.disconnect()
  })

  it('closes its streams and its port, and leaves no listener, when unloaded', async () => {
    const client = await openStream(host.root.inspector.url)
    await client.next('snapshot')
    await fiber.dispose()
    await client.closed
    await host.root.agents.disposeAll()
    expect(host.snapshot()).to.deep.equal(baseline)
  })
})
