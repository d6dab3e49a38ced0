import { expect } from 'chai'
import { scene } from '../support/scene.ts'

describe('ToolDefinition.available (SPEC §9)', () => {
  it('hides a tool whose available says no from schemas, lookup and execution, asking each time', async () => {
    const host = await scene()
    const agent = await host.agent()
    let open = false
    const asked: string[] = []
    host.root.tools.register({
      name: 'gated',
      description: 'g',
      parameters: { type: 'object' },
      available: (who) => {
        asked.push(who.id)
        return open
      },
      execute: () => 'ran',
    })
    expect(host.root.tools.schemas(agent)).to.deep.equal([])
    expect(host.root.tools.get('gated', agent)).to.equal(undefined)
    const hidden = await host.root.tools.execute({ name: 'gated', arguments: {}, agent })
    expect([hidden.code, hidden.content]).to.deep.equal(['UNKNOWN_TOOL', [{ type: 'text', text: 'Error: unknown tool "gated"' }]])
    open = true
    expect(host.root.tools.schemas(agent).map((schema) => schema.name)).to.deep.equal(['gated'])
    expect((await host.root.tools.execute({ name: 'gated', arguments: {}, agent })).content).to.deep.equal([{ type: 'text', text: 'ran' }])
    expect(asked).to.deep.equal(Array(5).fill(agent.id))
  })

  it('hides a tool whose available throws', async () => {
    const host = await scene()
    const agent = await host.agent()
    host.root.tools.register({
      name: 'broken',
      description: 'b',
      parameters: { type: 'object' },
      available: () => {
        throw new Error('no idea')
      },
      execute: () => 'ran',
    })
    expect(host.root.tools.get('broken', agent)).to.equal(undefined)
  })

  it('rejects an available that is not a function, naming the tool', async () => {
    const host = await scene()
    expect(() =>
      host.root.tools.register({ name: 'odd', description: 'o', parameters: { type: 'object' }, available: true as never, execute: () => 1 }),
    ).to.throw(TypeError, 'tool "odd" available must be a function')
  })
})
