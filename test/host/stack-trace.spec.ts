import { expect } from 'chai'
import { scene } from '../support/scene.ts'

describe('agent scope fibers and error stacks', () => {
  it('keeps the stack of an error made by an unrelated listener while an agent’s fiber is created', async () => {
    const s = await scene()
    const { agent } = await s.create()
    const made: Error[] = []
    s.on('internal/plugin', () => void made.push(new Error('made during plugin()')))
    // an effect through the agent's context makes its cordis fiber (SPEC §1: scoped lifetime)
    agent.ctx.effect(() => () => {})
    expect(made).to.have.length.greaterThan(0)
    for (const error of made) expect(error.stack).to.match(/\n\s+at /)
  })

  it('leaves Error.stackTraceLimit as it was after creating an agent’s fiber', async () => {
    const s = await scene()
    const { agent } = await s.create()
    const limit = Error.stackTraceLimit
    let seen: number | undefined
    s.on('internal/plugin', () => void (seen = Error.stackTraceLimit))
    agent.ctx.effect(() => () => {})
    expect(seen).to.equal(limit)
    expect(Error.stackTraceLimit).to.equal(limit)
  })
})
