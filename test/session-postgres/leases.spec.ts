import { type ChildProcess, spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { expect } from 'chai'
import { flatUuid } from '../../lib/uuid.ts'
import { type PostgresCluster, usePostgres } from '../support/postgres.ts'
import { rejectionOf } from '../support/scene.ts'
import { createPostgresHost, leasesFreed, type PostgresHost, scriptedOptions } from './fixture.ts'

const script = fileURLToPath(new URL('./lease-process.ts', import.meta.url))

interface Peer {
  child: ChildProcess
  /** The process's one report line. */
  report: Promise<{ ready?: string[]; error?: string; code?: string }>
  exited: Promise<void>
}

/** Another OS process running a host with `SessionPostgres` on the same schema. */
function peer(cluster: PostgresCluster, schema: string, command: 'create' | 'resume', rootId: string): Peer {
  const child = spawn(process.execPath, ['--import', 'tsx', script, cluster.connectionString, schema, command, rootId], {
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  const lines = createInterface({ input: child.stdout! })
  const report = new Promise<{ ready?: string[]; error?: string }>((resolve, reject) => {
    lines.once('line', (line) => resolve(JSON.parse(line)))
    child.once('exit', (code) => reject(new Error(`peer exited (${code}) before reporting`)))
  })
  report.catch(() => {})
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  return { child, report, exited }
}

describe('SessionPostgres leases across processes', function () {
  // two processes start tsx each, on a loaded machine
  this.timeout(60_000)
  let cluster: PostgresCluster
  let host: PostgresHost
  const peers: Peer[] = []

  before(async function () {
    cluster = await usePostgres(this)
  })

  beforeEach(async () => {
    host = await createPostgresHost(cluster)
  })

  afterEach(async () => {
    for (const { child, exited } of peers.splice(0)) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
      await exited
    }
  })

  it('refuses to resume or grow a tree another process holds, with the pinned error', async () => {
    const rootId = flatUuid()
    const holder = peer(cluster, host.schema, 'create', rootId)
    peers.push(holder)
    const [, childId] = (await holder.report).ready!
    const resumed = await rejectionOf(host.root.agents.resume(rootId, { agentOptions: scriptedOptions }))
    expect(resumed.message).to.equal(`tree ${rootId} is held by another process`)
    expect(resumed.code).to.equal('TREE_LEASED')
    // a new agent under a session of that tree is refused too, before its setup runs
    let setupRan = false
    const created = await rejectionOf(
      host.root.agents.create({ header: { parentSession: childId }, agentOptions: scriptedOptions, setup: () => void (setupRan = true) }),
    )
    expect(created.message).to.equal(`tree ${rootId} is held by another process`)
    expect(setupRan).to.equal(false)
    expect(host.root.agents.list()).to.deep.equal([])
    await host.expectClean()
  })

  it('lets another process resume the tree at once after the holder is killed with SIGKILL', async () => {
    const rootId = flatUuid()
    const holder = peer(cluster, host.schema, 'create', rootId)
    peers.push(holder)
    await holder.report
    expect((await rejectionOf(host.root.agents.resume(rootId, { agentOptions: scriptedOptions }))).code).to.equal('TREE_LEASED')
    holder.child.kill('SIGKILL')
    await holder.exited
    // no timeout to wait out: the server drops the dead connection's locks as its backend reads the
    // closed socket (TCP keepalive, the other way to notice, would take minutes)
    expect(await leasesFreed(cluster, 5_000)).to.be.below(5_000)
    const resumed = await host.root.agents.resume(rootId, { agentOptions: scriptedOptions })
    expect(resumed.agent.id).to.equal(rootId)
    expect(host.store.leased()).to.deep.equal([rootId])
    await resumed.dispose()
    await host.expectClean()
  })

  it('lets exactly one of two processes racing to resume one tree win', async () => {
    const rootId = flatUuid()
    const stored = await host.root.agents.create({ sessionId: rootId, agentOptions: scriptedOptions })
    await stored.dispose()
    await host.store.flush()
    const racers = [peer(cluster, host.schema, 'resume', rootId), peer(cluster, host.schema, 'resume', rootId)]
    peers.push(...racers)
    const reports = await Promise.all(racers.map((racer) => racer.report))
    expect(reports.filter((report) => report.ready)).to.have.length(1)
    expect(reports.filter((report) => report.error)).to.deep.equal([
      { error: `tree ${rootId} is held by another process`, code: 'TREE_LEASED' },
    ])
    await host.expectClean()
  })

  it('gives the lease back when the tree\'s last agent here is disposed', async () => {
    const rootId = flatUuid()
    const parent = await host.root.agents.create({ sessionId: rootId, agentOptions: scriptedOptions })
    const child = await host.root.agents.create({ owner: parent.agent, header: { parentSession: rootId }, agentOptions: scriptedOptions })
    expect(host.store.leased()).to.deep.equal([rootId])
    await child.dispose()
    expect(host.store.leased()).to.deep.equal([rootId])
    await parent.dispose()
    await host.store.flush()
    expect(host.store.leased()).to.deep.equal([])
    const other = peer(cluster, host.schema, 'resume', rootId)
    peers.push(other)
    expect(await other.report).to.deep.equal({ ready: [rootId] })
    await host.expectClean()
  })
})
