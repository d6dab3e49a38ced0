import { setTimeout as sleep } from 'node:timers/promises'
import { expect } from 'chai'
import pg from 'pg'
import { buildHeader } from '../../lib/session/session-header.ts'
import type { Session, SessionEvent } from '../../lib/types.ts'
import type { Queryable } from '../../plugins/session-postgres/pg-types.ts'
import { prepareSchema, tablesOf } from '../../plugins/session-postgres/schema.ts'
import { PostgresWriter } from '../../plugins/session-postgres/writer.ts'
import { freshSchema, type PostgresCluster, usePostgres } from '../support/postgres.ts'
import { createPostgresHost, scriptedOptions, storedEvents } from './fixture.ts'

/** Yields to the event loop `n` times, so appends land in different ticks (different batches). */
async function ticks(n: number): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve))
}

describe('SessionPostgres when the database restarts', function () {
  this.timeout(60_000)
  let cluster: PostgresCluster

  before(async function () {
    cluster = await usePostgres(this)
  })

  it('writes the appends made while the server was down once it is back, in order, with no gap and no duplicate', async () => {
    const host = await createPostgresHost(cluster, { retryFor: 60_000 })
    const handle = await host.root.agents.create({ agentOptions: scriptedOptions })
    const { agent } = handle
    for (let i = 0; i < 20; i++) agent.session.append('note/before', { i })
    await host.store.flush()
    await cluster.stop()
    try {
      // a whole turn runs while the server is down, in many ticks
      host.scripted.push({ text: 'during the outage' })
      agent.followup('task')
      await agent.whenIdle()
      for (let i = 0; i < 30; i++) {
        agent.session.append('note/during', { i })
        await ticks(1)
      }
      await sleep(300)
    } finally {
      await cluster.start()
    }
    for (let i = 0; i < 10; i++) agent.session.append('note/after', { i })
    await host.store.flush()
    expect(await storedEvents(cluster, host.schema, agent.id)).to.deep.equal(agent.session.events.map(({ seq, type, data }) => ({ seq, type, data })))
    expect(host.logged().some((line) => line.startsWith('PostgreSQL write failed ('))).to.equal(true)
    // the lease went with the old connection and was taken again on a new one
    expect(host.store.leased()).to.deep.equal([agent.id])
    await handle.dispose()
    await host.expectClean()
  })

  it('stops a session with a logged error when the server stays away past retryFor, keeping a prefix (no gap)', async () => {
    const host = await createPostgresHost(cluster, { retryFor: 400 })
    const handle = await host.root.agents.create({ agentOptions: scriptedOptions })
    const { agent } = handle
    for (let i = 0; i < 5; i++) agent.session.append('note/before', { i })
    await host.store.flush()
    await cluster.stop()
    try {
      agent.session.append('note/lost', { i: 0 })
      await host.store.flush()
    } finally {
      await cluster.start()
    }
    const failure = host.logged().find((line) => line.startsWith(`session "${agent.id}" could not be written to PostgreSQL: `))
    expect(failure).to.match(/; later events are not persisted$/)
    // later events are not written either: the stored session stays a prefix of the live one
    agent.session.append('note/after', { i: 0 })
    await host.store.flush()
    const stored = await storedEvents(cluster, host.schema, agent.id)
    expect(stored.map((event) => event.type)).to.deep.equal(Array(5).fill('note/before'))
    await handle.dispose()
    await host.expectClean()
  })
})

describe('SessionPostgres writer when a batch commits but its answer is lost', function () {
  this.timeout(30_000)
  let cluster: PostgresCluster

  before(async function () {
    cluster = await usePostgres(this)
  })

  it('writes the batch again without a duplicate event', async () => {
    const schema = freshSchema('writer')
    const tables = tablesOf(schema)
    const pool = new pg.Pool({ connectionString: cluster.connectionString })
    const client = await pool.connect()
    await prepareSchema(client, tables)
    client.release()
    let eventInserts = 0
    // the server runs every statement; the first events insert's answer then "drops with the connection"
    const flaky: Queryable = {
      async query(text, values) {
        const result = await pool.query(text, values as unknown[])
        if (text.includes(`INSERT INTO ${tables.events}`) && ++eventInserts === 1) {
          throw Object.assign(new Error('Connection terminated unexpectedly'), { code: undefined })
        }
        return result as never
      },
    }
    const warnings: string[] = []
    const writer = new PostgresWriter({ tables, db: async () => flaky, retryFor: 10_000, warn: (m) => warnings.push(m), error: (m) => warnings.push(m) })
    const events: SessionEvent[] = []
    const session = { id: 'retried', header: buildHeader({ id: 'retried', createdAt: 1 }), events } as unknown as Session
    writer.start(session, null)
    for (let i = 0; i < 3; i++) events.push(Object.freeze({ seq: i, type: 'note/n', data: { i } }))
    writer.follow(session)
    await writer.flushed()
    expect(eventInserts).to.equal(2)
    expect(warnings).to.have.length(1)
    expect(warnings[0]).to.match(/^PostgreSQL write failed \(Connection terminated unexpectedly\); retrying in 50 ms, in order$/)
    const { rows } = await pool.query(`SELECT seq FROM ${tables.events} WHERE session_id = 'retried' ORDER BY seq`)
    expect(rows.map((row) => row.seq)).to.deep.equal([0, 1, 2])
    await pool.end()
  })
})
