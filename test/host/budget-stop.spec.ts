import { expect } from 'chai'
import { scene, typesOf } from '../support/scene.ts'

describe('agent loop: a budget stop a listener answers (SPEC §9, found by the session-8 hunt)', () => {
  it('ends the turn error, naming the field, when an agent/pre-step listener answers a budget stop without a limit', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.on('agent/pre-step', () => ({ kind: 'budget' }) as never)
    agent.followup('hello')
    await agent.whenIdle()
    expect(agent.status).to.equal('idle')
    expect(agent.session.events.at(-1)?.data).to.deep.equal({
      turn: 1,
      reason: { kind: 'error', error: { message: 'budget stop limit must be "tokens", "modelRequests" or "children"' } },
    })
  })

  it('ends the turn error, naming the fields, when an agent/model-request listener answers a budget stop whose used is NaN', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.on('agent/model-request', () => ({ kind: 'budget', limit: 'tokens', used: Number.NaN, max: 10 }))
    agent.followup('hello')
    await agent.whenIdle()
    expect(typesOf(agent)).to.deep.equal(['turn/start', 'user/message', 'step/start', 'turn/end'])
    expect(agent.session.events.at(-1)?.data).to.deep.equal({
      turn: 1,
      reason: { kind: 'error', error: { message: 'budget stop used and max must be finite numbers' } },
    })
  })

  it('keeps a listener budget stop with finite figures as the turn end', async () => {
    const s = await scene()
    const { agent } = await s.create()
    s.on('agent/pre-step', () => ({ kind: 'budget', limit: 'modelRequests', used: 4, max: 4 }) as never)
    agent.followup('hello')
    await agent.whenIdle()
    expect(agent.session.events.at(-1)?.data).to.deep.equal({ turn: 1, reason: { kind: 'budget', limit: 'modelRequests', used: 4, max: 4 } })
  })
})
