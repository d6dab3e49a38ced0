import { expect } from 'chai'
import type { Session } from '../../lib/types.ts'
import { rejectionOf, scene } from '../support/scene.ts'

describe('agents.create: the session/lease hook', () => {
  it('asks it before setup with the built, unpublished session, and publishes synchronously when it answers nothing', async () => {
    const host = await scene()
    const seen: { id: string; published: boolean }[] = []
    host.on('session/lease', (session) => void seen.push({ id: session.id, published: !!host.root.sessions.get(session.id) }))
    let setupSawLease = false
    const creating = host.root.agents.create({ agentOptions: { provider: 'scripted', model: 'test' }, setup: () => void (setupSawLease = seen.length === 1) })
    // published in the same synchronous stretch: no tick was needed
    expect(host.root.agents.list()).to.have.length(1)
    const handle = await creating
    expect(seen).to.deep.equal([{ id: handle.agent.id, published: false }])
    expect(setupSawLease).to.equal(true)
    await handle.dispose()
  })

  it('waits for a promise it answers before running setup', async () => {
    const host = await scene()
    let release!: () => void
    host.on('session/lease', () => new Promise<void>((resolve) => (release = resolve)))
    let setupRan = false
    const creating = host.root.agents.create({ agentOptions: { provider: 'scripted', model: 'test' }, setup: () => void (setupRan = true) })
    await new Promise((resolve) => setImmediate(resolve))
    expect(setupRan).to.equal(false)
    expect(host.root.agents.list()).to.deep.equal([])
    release()
    const handle = await creating
    expect(setupRan).to.equal(true)
    await handle.dispose()
  })

  it('rolls the creation back and rejects with the refusal, setup never run, abandon not emitted', async () => {
    const host = await scene()
    const abandoned: Session[] = []
    host.on('session/lease', () => Promise.reject(new Error('tree r is held by another process')))
    host.on('session/lease-abandoned', (session) => void abandoned.push(session))
    let setupRan = false
    const error = await rejectionOf(host.root.agents.create({ agentOptions: { provider: 'scripted', model: 'test' }, setup: () => void (setupRan = true) }))
    expect(error.message).to.equal('tree r is held by another process')
    expect(setupRan).to.equal(false)
    expect(abandoned).to.deep.equal([])
    expect(host.root.agents.list()).to.deep.equal([])
    expect(host.root.sessions.list()).to.deep.equal([])
  })

  it('emits session/lease-abandoned when a creation it passed fails later, in setup', async () => {
    const host = await scene()
    const leased: Session[] = []
    const abandoned: Session[] = []
    host.on('session/lease', (session) => void leased.push(session))
    host.on('session/lease-abandoned', (session) => void abandoned.push(session))
    const error = await rejectionOf(
      host.root.agents.create({
        agentOptions: { provider: 'scripted', model: 'test' },
        setup: async () => {
          throw new Error('setup failed')
        },
      }),
    )
    expect(error.message).to.equal('setup failed')
    expect(abandoned).to.have.length(1)
    expect(abandoned[0]).to.equal(leased[0])
  })

  it('is asked by resume too', async () => {
    const host = await scene()
    const stored = { header: { id: 'stored', createdAt: 1 }, events: [] }
    host.on('session/load', (id) => (id === 'stored' ? stored : undefined))
    const asked: string[] = []
    host.on('session/lease', (session) => void asked.push(session.id))
    const handle = await host.root.agents.resume('stored', { agentOptions: { provider: 'scripted', model: 'test' } })
    expect(asked).to.deep.equal(['stored'])
    await handle.dispose()
  })
})
