import { createServer } from 'node:net'
import { expect } from 'chai'
import { PeerDependencyError } from '../../lib/peer-dependency.ts'
import { SessionPostgres } from '../../plugins/session-postgres/index.ts'
import { loadPg } from '../../plugins/session-postgres/client-module.ts'
import { type Workspace, workspace } from '../loader/fixture.ts'
import { freshSchema, type PostgresCluster, usePostgres } from '../support/postgres.ts'
import { rejectionOf, scene } from '../support/scene.ts'
import { createPostgresHost, query, scriptedOptions, storedEvents } from './fixture.ts'

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

describe('SessionPostgres config and schema', () => {
  let cluster: PostgresCluster

  before(async function () {
    cluster = await usePostgres(this)
  })

  it('keeps its tables in the subagent_inprocess schema by default', async () => {
    await query(cluster, 'DROP SCHEMA IF EXISTS subagent_inprocess CASCADE')
    const host = await scene({ plugins: [[SessionPostgres, { connectionString: cluster.connectionString }]] })
    host.defer(() => query(cluster, 'DROP SCHEMA subagent_inprocess CASCADE'))
    const handle = await host.root.agents.create({ agentOptions: scriptedOptions })
    await host.root.sessionPostgres.flush()
    expect(await query(cluster, 'SELECT id FROM subagent_inprocess.sessions')).to.deep.equal([{ id: handle.agent.id }])
    expect(await query(cluster, 'SELECT version FROM subagent_inprocess.format')).to.deep.equal([{ version: 1 }])
    await handle.dispose()
  })

  it('rejects a schema name that is not a plain SQL identifier', async () => {
    const host = await scene()
    const error = await rejectionOf(Promise.resolve(host.load(SessionPostgres, { connectionString: cluster.connectionString, schema: 'a"; DROP' })))
    expect(error.name).to.equal('ValidationError')
  })

  it('fails its load, naming the cause, when the server cannot be reached', async () => {
    const host = await scene()
    const port = await closedPort()
    const error = await rejectionOf(Promise.resolve(host.load(SessionPostgres, { connectionString: `postgres://nobody@127.0.0.1:${port}/none`, schema: freshSchema() })))
    expect(error.message).to.match(/^PostgreSQL could not be reached: connect ECONNREFUSED 127\.0\.0\.1:\d+$/)
    expect(error.code).to.equal('SESSION_STORE')
  })

  it('creates its tables on first use, then finds them again without recreating them', async () => {
    const first = await createPostgresHost(cluster)
    const handle = await first.root.agents.create({ agentOptions: scriptedOptions })
    handle.agent.session.append('note/kept', { n: 1 })
    await handle.dispose()
    await first.fiber.dispose()
    first.baseline = first.snapshots[0]!
    const second = await createPostgresHost(cluster, { schema: first.schema })
    expect(await storedEvents(cluster, first.schema, handle.agent.id)).to.deep.equal([{ seq: 0, type: 'note/kept', data: { n: 1 } }])
    expect(await query(cluster, `SELECT version FROM "${first.schema}".format`)).to.deep.equal([{ version: 1 }])
    const resumed = await second.root.agents.resume(handle.agent.id, { agentOptions: scriptedOptions })
    expect(resumed.agent.session.events).to.have.length(1)
    await resumed.dispose()
    await second.expectClean()
  })

  it('refuses a schema written by a newer format', async () => {
    const first = await createPostgresHost(cluster)
    await first.fiber.dispose()
    first.baseline = first.snapshots[0]!
    await query(cluster, `UPDATE "${first.schema}".format SET version = 2`)
    const host = await scene()
    const error = await rejectionOf(Promise.resolve(host.load(SessionPostgres, { connectionString: cluster.connectionString, schema: first.schema })))
    expect(error.message).to.equal(
      `schema "${first.schema}" holds session format version 2, newer than this SessionPostgres reads (1): upgrade the package`,
    )
  })

  it('refuses a schema whose tables it did not make', async () => {
    const schema = freshSchema()
    await query(cluster, `CREATE SCHEMA ${schema}; CREATE TABLE ${schema}.format (version integer); INSERT INTO ${schema}.format VALUES (1); CREATE TABLE ${schema}.sessions (id text)`)
    const host = await scene()
    const error = await rejectionOf(Promise.resolve(host.load(SessionPostgres, { connectionString: cluster.connectionString, schema })))
    expect(error.message).to.equal(`schema "${schema}" has a format table but no usable "sessions" table: it was not made by SessionPostgres`)
  })

  it('names the missing optional package pg with its install line', async () => {
    const missing = Object.assign(new Error("Cannot find package 'pg' imported from x"), { code: 'ERR_MODULE_NOT_FOUND' })
    const error = await rejectionOf(loadPg(() => Promise.reject(missing)))
    expect(error).to.be.instanceOf(PeerDependencyError)
    expect(error.message).to.equal('SessionPostgres needs the optional package "pg", which is not installed: npm i pg@^8.23.1')
  })

  it('adopts live agents after a config update and writes every event, the ones of the restart included', async () => {
    const host = await createPostgresHost(cluster)
    const handle = await host.root.agents.create({ agentOptions: scriptedOptions })
    host.scripted.push({ text: 'before' }, { text: 'after' })
    handle.agent.followup('hello')
    await handle.agent.whenIdle()
    const update = host.fiber.update({ connectionString: cluster.connectionString, schema: host.schema, retryFor: 5000 })
    handle.agent.session.append('note/while-restarting', {})
    await update
    await host.fiber
    handle.agent.followup('again')
    await handle.agent.whenIdle()
    await host.root.sessionPostgres.flush()
    expect(await storedEvents(cluster, host.schema, handle.agent.id)).to.deep.equal(
      handle.agent.session.events.map(({ seq, type, data }) => ({ seq, type, data })),
    )
    expect(host.root.sessionPostgres.leased()).to.deep.equal([handle.agent.id])
    await handle.dispose()
    await host.root.sessionPostgres.flush()
    expect(host.root.sessionPostgres.leased()).to.deep.equal([])
  })

  it('adopts agents published before it loaded', async () => {
    const host = await scene()
    const handle = await host.root.agents.create({ agentOptions: scriptedOptions })
    handle.agent.session.append('note/early', {})
    const schema = freshSchema()
    const fiber = host.load(SessionPostgres, { connectionString: cluster.connectionString, schema })
    await fiber
    handle.agent.session.append('note/late', {})
    await host.root.sessionPostgres.flush()
    expect((await storedEvents(cluster, schema, handle.agent.id)).map((event) => event.type)).to.deep.equal(['note/early', 'note/late'])
    await handle.dispose()
  })
})

describe('SessionPostgres from a host config file', () => {
  let cluster: PostgresCluster
  let space: Workspace

  before(async function () {
    cluster = await usePostgres(this)
  })

  beforeEach(() => {
    space = workspace()
  })

  afterEach(() => space.cleanup())

  it('loads from YAML by its package path with its config, and writes the agents of that host', async () => {
    const schema = freshSchema('yaml')
    const root = new URL('../../', import.meta.url).pathname
    space.write(
      'cordis.yml',
      `plugins:
  host: { path: ${root}plugins/host/index.ts }
  sessions: { path: ${root}plugins/session-postgres/index.ts, config: { connectionString: "${cluster.connectionString}", schema: ${schema} } }
`,
    )
    const { root: ctx, loader } = space.loader()
    const report = await loader.start()
    expect(report.failed).to.deep.equal([])
    const handle = await ctx.agents.create({ agentOptions: scriptedOptions })
    handle.agent.session.append('note/yaml', {})
    await ctx.sessionPostgres.flush()
    expect((await storedEvents(cluster, schema, handle.agent.id)).map((event) => event.type)).to.deep.equal(['note/yaml'])
    await handle.dispose()
  })
})
