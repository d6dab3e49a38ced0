import { expect } from 'chai'
import { scene } from '../support/scene.ts'

describe('tools.register: a definition registered again (SPEC §1.5)', () => {
  it('rejects a definition registered again after its parameters root type was changed in place', async () => {
    const s = await scene()
    const parameters: { type: string } = { type: 'object' }
    const def = { name: 'probe', description: 'The probe tool.', parameters, execute: () => 'ran' }
    const { agent } = await s.create()
    agent.ctx.tools.register(def)()
    parameters.type = 'array'
    expect(() => agent.ctx.tools.register(def)).to.throw(TypeError, 'tool "probe" parameters must be an object JSON schema')
  })
})
