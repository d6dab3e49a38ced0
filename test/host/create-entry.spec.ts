import { expect } from 'chai'
import type { CreateAgentOptions } from '../../lib/types.ts'
import { asyncRejectionOf, scene } from '../support/scene.ts'

function throwingGetter(key: string, message: string): CreateAgentOptions {
  return Object.defineProperty({}, key, {
    get() {
      throw new Error(message)
    },
  }) as CreateAgentOptions
}

describe('agents.create and agents.resume: malformed options', () => {
  it('rejects create options whose owner getter throws, naming the field', async () => {
    const s = await scene()
    const error = await asyncRejectionOf(() => s.root.agents.create(throwingGetter('owner', 'no owner')))
    expect(error).to.be.instanceOf(TypeError)
    expect(error.message).to.equal('agent create options owner could not be read: no owner')
  })

  it('rejects create options whose signal getter throws, naming the field', async () => {
    const s = await scene()
    const error = await asyncRejectionOf(() => s.root.agents.create(throwingGetter('signal', 'no signal')))
    expect(error.message).to.equal('agent create options signal could not be read: no signal')
  })

  it('rejects resume options of null before asking any store', async () => {
    const s = await scene()
    const asked: string[] = []
    s.on('session/load', (id) => void asked.push(id))
    const error = await asyncRejectionOf(() => s.root.agents.resume('some-id', null as unknown as CreateAgentOptions))
    expect(error).to.be.instanceOf(TypeError)
    expect(error.message).to.equal('agent resume options must be an object')
    expect(asked).to.deep.equal([])
  })
})
