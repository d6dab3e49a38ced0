import { spawn } from 'node:child_process'
import { expect } from 'chai'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import SubagentTool from '../../plugins/subagent-tool/index.ts'
import { projectRoot } from '../support/cli.ts'
import { type PostgresCluster, usePostgres } from '../support/postgres.ts'
import { rejectionOf } from '../support/scene.ts'
import { createPostgresHost, leasesFreed, scriptedOptions } from './fixture.ts'

/** Runs the crash host in its own OS process and kills it with SIGKILL once it is ready. */
function crashHost(cluster: PostgresCluster, schema: string): Promise<{ rootId: string; childId: string; signal: NodeJS.Signals | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/session-postgres/crash-host.ts', cluster.connectionString, schema], {
      cwd: projectRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    let ids: { rootId: string; childId: string } | undefined
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.stdout.on('data', (chunk) => {
      stdout += chunk
      const match = /^ready (\S+) (\S+)$/m.exec(stdout)
      if (match && !ids) {
        ids = { rootId: match[1]!, childId: match[2]! }
        child.kill('SIGKILL')
      }
    })
    child.on('error', reject)
    child.on('close', (_code, signal) => {
      if (!ids) return reject(new Error(`the crash host ended before it was ready:\n${stderr}`))
      resolve({ ...ids, signal })
    })
  })
}

describe('resumeTree on SessionPostgres after a host was killed with SIGKILL (SPEC §14)', function () {
  this.timeout(60_000)
  let cluster: PostgresCluster

  before(async function () {
    cluster = await usePostgres(this)
  })

  it('republishes the tree at once in another process, the interrupted call shown as interrupted, and holds its lease', async () => {
    const host = await createPostgresHost(cluster, {}, [InProcessRun, [SubagentTool, {}]])
    const { rootId, childId, signal } = await crashHost(cluster, host.schema)
    expect(signal).to.equal('SIGKILL')
    await leasesFreed(cluster)
    host.scripted.push({ text: 'the deploy was interrupted; I will check before retrying' })
    const tree = await host.root.inprocessRun.resumeTree(rootId)
    expect(tree.agents.map((agent) => agent.id)).to.deep.equal([childId])
    expect(host.store.leased()).to.deep.equal([rootId])
    const deploy = tree.root.session.events.find((event) => event.type === 'tool/result' && (event.data as { callId: string }).callId === 'call_deploy')
    expect(deploy?.data).to.deep.include({ isError: true, content: [{ type: 'text', text: 'Error: interrupted before the tool returned' }] })
    const [firstEnd] = tree.root.session.events.filter((event) => event.type === 'turn/end')
    expect(firstEnd!.data).to.deep.equal({ turn: 1, reason: { kind: 'interrupted' } })
    // the closing appends reached the database
    await host.store.flush()
    const stored = await host.store.load(rootId)
    expect(stored.events.map((event) => event.type)).to.deep.equal(tree.root.session.events.map((event) => event.type))
    // a resume of the same tree through this process's store is refused while it runs here
    expect((await rejectionOf(host.root.inprocessRun.resumeTree(rootId))).message).to.equal(`tree ${rootId} is already running in this process`)
    await host.root.subagentTool.settled(tree.root)
    await tree.root.whenIdle()
    await tree.dispose()
    await host.store.flush()
    expect(host.store.leased()).to.deep.equal([])
    // disposed: never republished
    expect((await rejectionOf(host.root.inprocessRun.resumeTree(rootId))).message).to.equal(`tree ${rootId} was disposed and cannot be resumed`)
    await host.expectClean()
  })

  it('refuses resumeTree while another process holds the tree', async () => {
    const host = await createPostgresHost(cluster, {}, [InProcessRun])
    const other = await createPostgresHost(cluster, { schema: host.schema }, [InProcessRun])
    const rootAgent = await other.root.agents.create({ agentOptions: scriptedOptions })
    await other.store.flush()
    // another host on the same schema stands for another process: its lease is on its own connection
    const error = await rejectionOf(host.root.inprocessRun.resumeTree(rootAgent.agent.id))
    expect(error.message).to.equal(`tree ${rootAgent.agent.id} is held by another process`)
    expect(host.root.agents.list()).to.deep.equal([])
    await rootAgent.dispose()
    await host.expectClean()
  })
})
