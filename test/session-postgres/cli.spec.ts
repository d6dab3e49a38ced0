import { spawn } from 'node:child_process'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { expect } from 'chai'
import { openStream } from '../inspector/client.ts'
import { type Workspace, workspace } from '../loader/fixture.ts'
import { projectRoot, runCli } from '../support/cli.ts'
import { freshSchema, type PostgresCluster, usePostgres } from '../support/postgres.ts'
import { leasesFreed, query } from './fixture.ts'

const root = new URL('../../', import.meta.url).pathname

/**
 * A plugin that runs one scripted turn of agent `cli-root`, then waits for the store `--sessions`
 * loaded (it starts once its connection and schema are ready) to write it, and asks to exit.
 */
const probe = `import type { Context } from 'cordis'
export default function Probe(ctx: Context) {
  ctx.scripted.push({ text: 'stored in postgres' })
  void (async () => {
    const { agent } = await ctx.agents.create({ sessionId: 'cli-root', agentOptions: { provider: 'scripted', model: 'm' } })
    agent.followup('go')
    await agent.whenIdle()
    let store
    while (!(store = ctx.get('sessionPostgres'))) await new Promise((resolve) => setTimeout(resolve, 10))
    await store.flush()
    ctx.emit('loader/exit', 0)
  })()
}
Probe.inject = ['agents', 'scripted']
`

describe('subagent-inprocess with --sessions postgres://…', function () {
  // each case starts a Node process with tsx
  this.timeout(60_000)
  let cluster: PostgresCluster
  let space: Workspace

  before(async function () {
    cluster = await usePostgres(this)
  })

  beforeEach(() => {
    space = workspace()
  })

  afterEach(() => space.cleanup())

  it('start keeps the sessions in the schema the URL names, and inspect serves them', async () => {
    const schema = freshSchema('cli')
    const url = `${cluster.connectionString}?schema=${schema}`
    space.write('probe.ts', probe)
    space.write(
      'cordis.yml',
      `plugins:
  host: { path: ${root}plugins/host/index.ts }
  scripted: { path: ${root}plugins/scripted-model/index.ts }
  probe: { path: ./probe.ts }
`,
    )
    const outcome = await runCli(['start', space.configFile, '--sessions', url, '--quiet'])
    expect([outcome.code, outcome.stderr]).to.deep.equal([0, ''])
    const types = await query<{ type: string }>(cluster, `SELECT type FROM "${schema}".events WHERE session_id = 'cli-root' ORDER BY seq`)
    expect(types.map((row) => row.type)).to.include.members(['turn/start', 'assistant/message', 'turn/end'])

    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/subagent-inprocess.ts', 'inspect', url], { cwd: projectRoot, stdio: ['ignore', 'pipe', 'pipe'] })
    const exited = new Promise((resolve) => child.on('exit', resolve))
    const page = await new Promise<string>((resolve) => {
      let stdout = ''
      child.stdout.on('data', (chunk) => {
        stdout += chunk
        const match = /inspector: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(stdout)
        if (match) resolve(match[1]!)
      })
    })
    const client = await openStream(page)
    const snapshot = (await client.next('snapshot')).data as { agents: { id: string }[]; problems: string[] }
    client.disconnect()
    child.kill('SIGTERM')
    expect(await exited).to.equal(0)
    expect(snapshot.agents.map((agent) => agent.id)).to.deep.equal(['cli-root'])
    expect(snapshot.problems).to.deep.equal([])
  })

  it('resume continues a tree a killed process left in PostgreSQL, and leaves it resumable', async () => {
    const schema = freshSchema('cli')
    const url = `${cluster.connectionString}?schema=${schema}`
    // a process made the tree (a root and a child) and died with SIGKILL: nothing was disposed
    const maker = spawn(process.execPath, ['--import', 'tsx', 'test/session-postgres/lease-process.ts', cluster.connectionString, schema, 'create', 'cli-tree'], {
      cwd: projectRoot,
      stdio: ['pipe', 'pipe', 'inherit'],
    })
    await new Promise<void>((resolve) => maker.stdout.once('data', () => resolve()))
    maker.kill('SIGKILL')
    await new Promise((resolve) => maker.once('exit', resolve))
    await leasesFreed(cluster)
    space.write(
      'host.yml',
      `plugins:
  host: { path: ${root}plugins/host/index.ts }
  scripted: { path: ${root}plugins/scripted-model/index.ts }
  inprocess-run: { path: ${root}plugins/inprocess-run/index.ts }
  answers: { path: ${root}test/durable/fixtures/script-answers.ts }
`,
    )
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/subagent-inprocess.ts', 'resume', 'cli-tree', join(space.dir, 'host.yml'), '--sessions', url], {
      cwd: projectRoot,
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.stdin.end('are you back?\n')
    const code = await new Promise((resolve) => child.on('close', resolve))
    expect(stderr).to.include('resumed tree cli-tree with 1 descendants')
    expect([code, stdout]).to.deep.equal([0, 'hello from the resumed root\n'])
    const disposed = await query<{ disposed_at: Date | null }>(cluster, `SELECT disposed_at FROM "${schema}".sessions`)
    expect(disposed).to.deep.equal([{ disposed_at: null }, { disposed_at: null }])
    const messages = await query<{ data: { content: { text: string }[] } }>(
      cluster,
      `SELECT data FROM "${schema}".events WHERE session_id = 'cli-tree' AND type = 'assistant/message' ORDER BY seq`,
    )
    expect(messages.at(-1)?.data.content).to.deep.equal([{ type: 'text', text: 'hello from the resumed root' }])
  })

  it('says in one line that the store cannot be used, password hidden, and exits with 1', async () => {
    const server = createServer()
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as { port: number }
    await new Promise((resolve) => server.close(resolve))
    space.write('cordis.yml', `plugins:\n  host: { path: ${root}plugins/host/index.ts }\n`)
    const outcome = await runCli(['start', space.configFile, '--sessions', `postgres://u:secret@127.0.0.1:${port}/db`, '--quiet'])
    expect(outcome.code).to.equal(1)
    expect(outcome.stderr).to.equal(
      `cannot use the session store "postgres://u:***@127.0.0.1:${port}/db": PostgreSQL could not be reached: connect ECONNREFUSED 127.0.0.1:${port}\n`,
    )
  })
})
