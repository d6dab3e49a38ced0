import { expect } from 'chai'
import { createDriverHost } from '../support/driver.ts'
import { scene } from '../support/scene.ts'

describe('secret-free errors, diagnostics and logs', () => {
  it('redacts URL credentials from a tool’s error result', async () => {
    const s = await scene()
    s.root.tools.register({
      name: 'query',
      description: 'Queries the database.',
      parameters: { type: 'object' },
      execute: () => {
        throw new Error('cannot connect to postgres://app:s3cr3t-pw@db.internal/main')
      },
    })
    const result = await s.root.tools.execute({ name: 'query', arguments: {} })
    expect(result.content).to.deep.equal([{ type: 'text', text: 'Error: cannot connect to postgres://***@db.internal/main' }])
  })

  it('redacts a bearer token from a contained listener failure in the host log', async () => {
    const s = await scene()
    s.on('agent/created', () => {
      throw new Error('upstream said: Authorization: Bearer sk-live-0123456789')
    })
    await s.create()
    const logged = s.logged()
    expect(logged).to.have.length(1)
    // the host logs the stack, which starts with the message
    expect(logged[0]).to.match(/^a "agent\/created" listener failed: Error: upstream said: Authorization: Bearer \*\*\*\n/)
    expect(logged[0]).not.to.include('sk-live')
  })

  it('redacts URL credentials from a child’s diagnostic', async () => {
    const host = await createDriverHost()
    host.scripted.push(new Error('request to https://bot:tok3n-value@api.example.com/v1 failed'))
    const run = await host.root.inprocessRun.spawn(host.request())
    const result = await run.result
    await run.dispose()
    expect(result.diagnostic).to.equal('the child turn failed: request to https://***@api.example.com/v1 failed')
  })
})
