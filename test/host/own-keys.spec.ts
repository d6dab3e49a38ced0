import { expect } from 'chai'
import { scopeOf } from '../../plugins/host/scope.ts'
import { scene } from '../support/scene.ts'

// the per-agent classes assign their fields in the constructor (no field initializers): what a
// caller enumerates on an agent, its session and its scope must stay as it was
describe('own keys of an agent and what it holds', () => {
  it("keeps an agent's own keys in their order, its scope behind a symbol", async () => {
    const s = await scene()
    const { agent } = await s.create()
    expect(Object.keys(agent)).to.deep.equal(['id', 'session', 'options', 'services', 'status', 'closed'])
    expect(Object.getOwnPropertySymbols(agent).map(String)).to.deep.equal(['Symbol(subagent-inprocess.scope)'])
  })

  it("keeps a session's own keys in their order, published or not", async () => {
    const s = await scene()
    const { agent } = await s.create()
    expect(Object.keys(agent.session)).to.deep.equal(['header', 'observer', 'scope'])
  })

  it("keeps an agent scope's own keys in their order", async () => {
    const s = await scene()
    const { agent } = await s.create()
    expect(Object.keys(scopeOf(agent)!)).to.deep.equal(['agent', 'owner', 'callerCtx', 'toolsVersion', 'isDisposed'])
  })
})
