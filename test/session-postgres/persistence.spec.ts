import { expect } from 'chai'
import { type PostgresCluster, usePostgres } from '../support/postgres.ts'
import { createPostgresHost, query, scriptedOptions, storedEvents } from './fixture.ts'

describe('SessionPostgres persistence', () => {
  let cluster: PostgresCluster

  before(async function () {
    cluster = await usePostgres(this)
  })

  it('writes a published session\'s header and every event, in seq order', async () => {
    const host = await createPostgresHost(cluster)
    host.scripted.push({ text: 'done' })
    const handle = await host.root.agents.create({ agentOptions: scriptedOptions })
    handle.agent.followup('task')
    await handle.agent.whenIdle()
    await host.store.flush()
    const [row] = await query<{ header: unknown; root_id: string; parent_id: string | null; disposed_at: Date | null }>(
      cluster,
      `SELECT header, root_id, parent_id, disposed_at FROM "${host.schema}".sessions WHERE id = $1`,
      [handle.agent.id],
    )
    expect(row).to.deep.equal({ header: { ...handle.agent.session.header }, root_id: handle.agent.id, parent_id: null, disposed_at: null })
    expect(await storedEvents(cluster, host.schema, handle.agent.id)).to.deep.equal(
      handle.agent.session.events.map(({ seq, type, data }) => ({ seq, type, data })),
    )
    await handle.dispose()
    await host.expectClean()
  })

  it('records a disposal in disposed_at, reported by load and cleared by a resume, and keeps the rows', async () => {
    const host = await createPostgresHost(cluster)
    const handle = await host.root.agents.create({ agentOptions: scriptedOptions })
    handle.agent.session.append('note/kept', { n: 1 })
    await handle.dispose()
    await host.store.flush()
    const [row] = await query<{ disposed_at: Date | null }>(cluster, `SELECT disposed_at FROM "${host.schema}".sessions WHERE id = $1`, [
      handle.agent.id,
    ])
    expect(row?.disposed_at).to.be.instanceOf(Date)
    expect(await storedEvents(cluster, host.schema, handle.agent.id)).to.have.length(1)
    expect((await host.store.load(handle.agent.id)).disposed).to.equal(true)
    // an explicit resume makes it live again
    const resumed = await host.root.agents.resume(handle.agent.id, { agentOptions: scriptedOptions })
    await host.store.flush()
    expect((await host.store.load(handle.agent.id)).disposed).to.equal(undefined)
    await resumed.dispose()
    await host.expectClean()
  })

  it('refuses a resume whose session gained events in the store between its read and its lease, and resumes it whole afterwards', async () => {
    const host = await createPostgresHost(cluster)
    const handle = await host.root.agents.create({ agentOptions: scriptedOptions })
    const { id } = handle.agent
    handle.agent.session.append('note/kept', { n: 1 })
    await handle.dispose()
    await host.store.flush()
    // another process, holding the tree until it died, wrote one more event after this read
    const store = host.store as unknown as { load(id: string): Promise<{ events: unknown[] }> }
    const read = store.load.bind(store)
    store.load = async (loadedId) => {
      const stored = await read(loadedId)
      await query(cluster, `INSERT INTO "${host.schema}".events (session_id, seq, type, data) VALUES ($1, $2, 'note/late', '{}')`, [loadedId, stored.events.length])
      return stored
    }
    const refused = await host.root.agents.resume(id, { agentOptions: scriptedOptions }).then(
      () => undefined,
      (error: Error) => error.message,
    )
    expect(refused).to.equal(`session "${id}" changed in PostgreSQL while it was being resumed (1 events read, 2 stored once its tree's lease was taken): resume it again`)
    expect(host.root.agents.get(id)).to.equal(undefined)
    store.load = read
    const resumed = await host.root.agents.resume(id, { agentOptions: scriptedOptions })
    expect(resumed.agent.session.events.map((event) => event.type)).to.deep.equal(['note/kept', 'note/late'])
    await resumed.dispose()
    await host.expectClean()
  })

  it('resumes a stored session with the same header and events', async () => {
    const host = await createPostgresHost(cluster)
    host.scripted.push({ text: 'first' }, { text: 'second' })
    const handle = await host.root.agents.create({ agentOptions: scriptedOptions, header: { delegationDepth: 2 } })
    handle.agent.followup('one')
    await handle.agent.whenIdle()
    const events = handle.agent.session.events.map((event) => ({ ...event }))
    const header = { ...handle.agent.session.header }
    await handle.dispose()
    const resumed = await host.root.agents.resume(handle.agent.id, { agentOptions: scriptedOptions })
    expect({ ...resumed.agent.session.header }).to.deep.equal(header)
    expect(resumed.agent.session.events.map((event) => ({ ...event }))).to.deep.equal(events)
    resumed.agent.followup('two')
    await resumed.agent.whenIdle()
    await host.store.flush()
    expect(await storedEvents(cluster, host.schema, handle.agent.id)).to.deep.equal(
      resumed.agent.session.events.map(({ seq, type, data }) => ({ seq, type, data })),
    )
    await resumed.dispose()
    await host.expectClean()
  })
})
