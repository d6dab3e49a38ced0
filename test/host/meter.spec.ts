import { expect } from 'chai'
import type { Context } from 'cordis'
import type { Agent, AgentMeter, BudgetStop, Session, SessionEvent, Usage } from '../../lib/types.ts'
import { scene, typesOf } from '../support/scene.ts'

/** A plugin that installs `meter` for its lifetime. */
function meterPlugin(meter: AgentMeter) {
  const plugin = (ctx: Context) => void ctx.agents.meter(meter)
  plugin.inject = ['agents']
  return plugin
}

/** A meter that records its calls and answers `stop` at the step while `stopAtStep` is set. */
function recordingMeter(calls: string[], stopAtStep?: BudgetStop): AgentMeter {
  return {
    beforeStep: (agent: Agent) => {
      calls.push(`step ${agent.session.events.length}`)
      return stopAtStep
    },
    request: () => {
      calls.push('request')
      return undefined
    },
    usage: (_agent: Agent, usage: Usage) => void calls.push(`usage ${usage.inputTokens}+${usage.outputTokens}`),
  }
}

describe('agent loop: meters (ctx.agents.meter)', () => {
  it('calls a meter at the step, at the send and for the counted message, before its session/event', async () => {
    const s = await scene()
    const calls: string[] = []
    const fiber = s.root.plugin(meterPlugin(recordingMeter(calls)))
    await fiber
    s.on('session/event', (_session: Session, event: SessionEvent) => {
      if (event.type === 'assistant/message') calls.push('session/event assistant/message')
    })
    const { agent } = await s.create()
    s.scripted.push({ text: 'hi', usage: { inputTokens: 3, outputTokens: 2 } })
    agent.followup('hello')
    await agent.whenIdle()
    expect(calls).to.deep.equal(['step 2', 'request', 'usage 3+2', 'session/event assistant/message'])
    await fiber.dispose()
    await s.end()
  })

  it('ends the turn with the budget stop a meter answers at the step, before step/start', async () => {
    const s = await scene()
    const stop: BudgetStop = { kind: 'budget', limit: 'tokens', used: 10, max: 10 }
    const fiber = s.root.plugin(meterPlugin(recordingMeter([], stop)))
    await fiber
    const { agent } = await s.create()
    agent.followup('hello')
    await agent.whenIdle()
    expect(typesOf(agent)).to.deep.equal(['turn/start', 'user/message', 'turn/end'])
    expect(agent.session.events.at(-1)?.data).to.deep.equal({ turn: 1, reason: stop })
    await fiber.dispose()
    await s.end()
  })

  it('stops calling a meter once the plugin that installed it is unloaded', async () => {
    const s = await scene()
    const calls: string[] = []
    const fiber = s.root.plugin(meterPlugin(recordingMeter(calls)))
    await fiber
    await fiber.dispose()
    const { agent } = await s.create()
    s.scripted.push({ text: 'hi', usage: { inputTokens: 1, outputTokens: 1 } })
    agent.followup('hello')
    await agent.whenIdle()
    expect(calls).to.deep.equal([])
    await s.end()
  })

  it('ends the turn error, recording no assistant/message, when a meter writes NaN into the usage it is given', async () => {
    const s = await scene()
    const fiber = s.root.plugin(
      meterPlugin({
        beforeStep: () => undefined,
        request: () => undefined,
        usage: (_agent, usage) => {
          ;(usage as { inputTokens: number }).inputTokens = Number.NaN
        },
      }),
    )
    await fiber
    const { agent } = await s.create()
    s.scripted.push({ text: 'hi', usage: { inputTokens: 3, outputTokens: 2 } })
    agent.followup('hello')
    await agent.whenIdle()
    expect(typesOf(agent)).to.deep.equal(['turn/start', 'user/message', 'step/start', 'assistant/delta', 'turn/end'])
    const end = agent.session.events.at(-1)?.data as { reason: { kind: string } } | undefined
    expect(end?.reason.kind).to.equal('error')
    await fiber.dispose()
    await s.end()
  })
})
