import { expect } from 'chai'
import { Context } from 'cordis'
import { DepthPolicy, Host, InProcessRun, ScriptedModel, StructuredOutput } from '../../index.ts'

describe('README "Use it" example', () => {
  it('runs as written and leaves nothing behind', async () => {
    const ctx = new Context()
    await ctx.plugin(Host)
    await ctx.plugin(ScriptedModel)
    await ctx.plugin(InProcessRun)
    await ctx.plugin(StructuredOutput)
    await ctx.plugin(DepthPolicy, { maxDepth: 2 })

    const { agent: parent } = await ctx.agents.create({ agentOptions: { provider: 'scripted', model: 'demo' } })
    ctx.scripted.push({ toolCalls: [{ name: 'structured_output', arguments: { verdict: 'ship it' } }] })

    const run = await ctx.inprocessRun.spawn({
      parent,
      prompt: 'Review the change and give a verdict.',
      signal: AbortSignal.timeout(60_000),
      outputSchema: { type: 'object', properties: { verdict: { type: 'string' } }, required: ['verdict'] },
    })
    const result = await run.result
    expect(result.structured).to.deep.equal({ verdict: 'ship it' })
    expect(result.stopReason).to.equal('completed')
    await run.dispose()
    expect(ctx.agents.list()).to.deep.equal([parent])
    expect(ctx.sessions.get(run.id)).to.equal(undefined)
  })
})
