import { expect } from 'chai'
import sinon from 'sinon'
import type { Agent, ToolDefinition } from '../../lib/types.ts'
import { Tools } from '../../plugins/host/index.ts'
import { scene } from '../support/scene.ts'

function gated(name: string, open: () => boolean): ToolDefinition {
  return { name, description: name, parameters: { type: 'object' }, available: open, execute: () => 'ran' }
}

/** Counts the listings that ask tools for their availability (every listing while any tool an agent may see is conditional). */
function spyOnAsking(): sinon.SinonSpy {
  return sinon.spy(Tools.prototype as unknown as { available(schemas: unknown, agent: Agent): unknown }, 'available')
}

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

  it('hides an agent\'s own conditional tool from its listing while its available says no', async () => {
    const host = await scene()
    const { agent } = await host.create()
    let open = false
    host.root.tools.registerFor(agent, gated('own', () => open))
    expect(host.root.tools.schemas(agent)).to.deep.equal([])
    open = true
    expect(host.root.tools.schemas(agent).map((schema) => schema.name)).to.deep.equal(['own'])
  })

  for (const how of ['agent.ctx.tools.register', 'tools.registerFor'] as const) {
    it(`lists another agent's tools without asking availability once an agent whose conditional tool came by ${how} is disposed`, async () => {
      const host = await scene()
      const other = await host.agent()
      const owner = await host.create()
      if (how === 'tools.registerFor') host.root.tools.registerFor(owner.agent, gated('own', () => true))
      else owner.agent.ctx.tools.register(gated('own', () => true))
      await owner.dispose()
      const asking = spyOnAsking()
      try {
        host.root.tools.schemas(other)
        expect(asking.callCount).to.equal(0)
      } finally {
        asking.restore()
      }
    })
  }
})
