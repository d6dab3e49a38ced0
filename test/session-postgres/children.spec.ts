import { expect } from 'chai'
import type { AgentHandle } from '../../lib/types.ts'
import { type PostgresCluster, usePostgres } from '../support/postgres.ts'
import { rejectionOf } from '../support/scene.ts'
import { createPostgresHost, query, scriptedOptions } from './fixture.ts'

describe('SessionPostgres session/children and load', () => {
  let cluster: PostgresCluster

  before(async function () {
    cluster = await usePostgres(this)
  })

  it('lists the stored children of a session in creation order, leaving out disposed ones', async () => {
    const host = await createPostgresHost(cluster)
    const parent = await host.root.agents.create({ agentOptions: scriptedOptions })
    const header = { parentSession: parent.agent.id, origin: 'subagent' as const, delegationDepth: 1 }
    const children: AgentHandle[] = []
    for (let i = 0; i < 4; i++) children.push(await host.root.agents.create({ owner: parent.agent, header, agentOptions: scriptedOptions }))
    const grandchild = await host.root.agents.create({ owner: children[0]!.agent, header: { ...header, parentSession: children[0]!.agent.id }, agentOptions: scriptedOptions })
    await children[2]!.dispose()
    expect(await host.store.children(parent.agent.id)).to.deep.equal([0, 1, 3].map((i) => children[i]!.agent.id))
    expect(await host.store.children(children[0]!.agent.id)).to.deep.equal([grandchild.agent.id])
    expect(await host.store.children(children[1]!.agent.id)).to.deep.equal([])
    expect(await host.store.children('not-stored')).to.equal(undefined)
    // the hook answers the same
    expect(await host.root.serial('session/children', children[0]!.agent.id)).to.deep.equal([grandchild.agent.id])
    // every session of the tree carries the tree's root id
    const roots = await query<{ root_id: string }>(cluster, `SELECT DISTINCT root_id FROM "${host.schema}".sessions`)
    expect(roots).to.deep.equal([{ root_id: parent.agent.id }])
    await parent.dispose()
    await host.expectClean()
  })

  it('rejects the load of a session it does not hold, and resume then names the first store\'s error', async () => {
    const host = await createPostgresHost(cluster)
    const error = await rejectionOf(host.store.load('missing'))
    expect(error.message).to.equal('session "missing" not found in PostgreSQL')
    expect(error.code).to.equal('SESSION_STORE')
    const resumed = await rejectionOf(host.root.agents.resume('missing', { agentOptions: scriptedOptions }))
    expect(resumed.message).to.equal('session "missing" not found in PostgreSQL')
    await host.expectClean()
  })

  it('rejects a stored session with a gap in its events', async () => {
    const host = await createPostgresHost(cluster)
    const handle = await host.root.agents.create({ agentOptions: scriptedOptions })
    for (let i = 0; i < 3; i++) handle.agent.session.append('note/n', { i })
    await handle.dispose()
    await host.store.flush()
    await query(cluster, `DELETE FROM "${host.schema}".events WHERE session_id = $1 AND seq = 1`, [handle.agent.id])
    const error = await rejectionOf(host.store.load(handle.agent.id))
    expect(error.message).to.equal(`stored session "${handle.agent.id}" event 1 is missing (found seq 2)`)
    await host.expectClean()
  })

  it('rejects a stored header the host would not build, with the host\'s message', async () => {
    const host = await createPostgresHost(cluster)
    const handle = await host.root.agents.create({ agentOptions: scriptedOptions })
    await handle.dispose()
    await host.store.flush()
    await query(cluster, `UPDATE "${host.schema}".sessions SET header = $2 WHERE id = $1`, [
      handle.agent.id,
      JSON.stringify({ ...handle.agent.session.header, delegationDepth: -1 }),
    ])
    const error = await rejectionOf(host.store.load(handle.agent.id))
    expect(error.message).to.equal('session header delegationDepth must be a non-negative safe integer')
    await host.expectClean()
  })

  it('refuses to persist a new session whose id another stored session has, and says so', async () => {
    const host = await createPostgresHost(cluster)
    const first = await host.root.agents.create({ sessionId: 'taken', agentOptions: scriptedOptions })
    first.agent.session.append('note/first', {})
    await first.dispose()
    await host.store.flush()
    const second = await host.root.agents.create({ sessionId: 'taken', agentOptions: scriptedOptions })
    second.agent.session.append('note/second', {})
    await host.store.flush()
    expect(host.logged()).to.include('session "taken" already exists in PostgreSQL; the new session is not persisted')
    const stored = await host.store.load('taken')
    expect(stored.events.map((event) => event.type)).to.deep.equal(['note/first'])
    await second.dispose()
    await host.expectClean()
  })
})
