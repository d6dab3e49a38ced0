import { expect } from 'chai'
import type { Agent } from '../../lib/types.ts'
import { AgentSlot } from '../../plugins/host/index.ts'
import { scene } from '../support/scene.ts'

describe('AgentSlot: a value per host agent', () => {
  it('answers undefined for an agent never given a value, and for no agent', async () => {
    const s = await scene()
    const { agent } = await s.create()
    const slot = new AgentSlot<number>()
    expect([slot.get(agent), slot.get(undefined)]).to.deep.equal([undefined, undefined])
  })

  it('keeps the values of two slots on one agent apart, and of one slot on two agents', async () => {
    const s = await scene()
    const [a, b] = [(await s.create()).agent, (await s.create()).agent]
    const [first, second] = [new AgentSlot<string>(), new AgentSlot<string>()]
    first.set(a, 'a1')
    second.set(a, 'a2')
    first.set(b, 'b1')
    expect([first.get(a), second.get(a), first.get(b), second.get(b)]).to.deep.equal(['a1', 'a2', 'b1', undefined])
  })

  it('replaces the value of a slot set twice', async () => {
    const s = await scene()
    const { agent } = await s.create()
    const slot = new AgentSlot<number>()
    slot.set(agent, 1)
    slot.set(agent, 2)
    expect(slot.get(agent)).to.equal(2)
  })

  it('keeps a value readable after the agent is disposed (it goes with the agent object)', async () => {
    const s = await scene()
    const handle = await s.create()
    const slot = new AgentSlot<string>()
    slot.set(handle.agent, 'kept')
    await handle.dispose()
    expect(slot.get(handle.agent)).to.equal('kept')
  })

  it('rejects an agent the host did not make with a TypeError', () => {
    const slot = new AgentSlot<number>()
    expect(() => slot.set({ id: 'foreign' } as unknown as Agent, 1)).to.throw(TypeError, 'agent slot needs an agent made by the host')
  })
})
