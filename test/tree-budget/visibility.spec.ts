import { expect } from 'chai'
import { bindingsFor } from '../../plugins/code-mode/index.ts'
import type { ToolExecution } from '../../lib/types.ts'
import { createFixture } from '../subagent-tool/fixture.ts'
import { createBudgetFixture } from './fixture.ts'

function sectionsOf(system: string): string[] {
  return system.split('\n\n')
}

describe('TreeBudget and DepthPolicy: what the model sees (SPEC §9)', () => {
  it('gives an agent that can see subagent the delegation section with depth, cap and budget', async () => {
    const fixture = await createBudgetFixture({ budget: { maxChildren: 5 }, depthPolicy: { maxDepth: 2 }, subagentTool: {} })
    fixture.host.scripted.push({ text: 'ok' })
    fixture.root.followup('hello')
    await fixture.root.whenIdle()
    expect(sectionsOf(fixture.host.scripted.requests[0]!.system)).to.include(
      'Delegation: you are at depth 0; a subagent you start runs at depth 1.\nThe deepest subagent allowed runs at depth 2.\nLeft for this delegation tree: unlimited tokens, unlimited model requests, 5 subagent starts.',
    )
  })

  it('contributes the section as "delegation" at order 150, in the tool guidance band', async () => {
    const fixture = await createBudgetFixture({ depthPolicy: { maxDepth: 2 }, subagentTool: {} })
    const { sections } = fixture.host.root.systemPrompt.assemble(fixture.root)
    expect(sections.filter((section) => section.text.startsWith('Delegation:')).map(({ name, order }) => ({ name, order }))).to.deep.equal([
      { name: 'delegation', order: 150 },
    ])
  })

  it('gives a child below the cap the section with its own depth', async () => {
    const fixture = await createBudgetFixture({ depthPolicy: { maxDepth: 2 }, subagentTool: {} })
    fixture.host.scripted.push('hang')
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
    const section = fixture.host.root.systemPrompt.assemble(run.agent).sections.find((entry) => entry.name === 'delegation')
    expect(section?.text).to.equal(
      'Delegation: you are at depth 1; a subagent you start runs at depth 2.\nThe deepest subagent allowed runs at depth 2.\nSubagents you start cannot start subagents of their own.\nLeft for this delegation tree: unlimited tokens, unlimited model requests, unlimited subagent starts.',
    )
    await run.dispose()
  })

  it('gives no delegation section to an agent that cannot see subagent', async () => {
    const fixture = await createBudgetFixture({ depthPolicy: { maxDepth: 1 }, subagentTool: {} })
    fixture.host.scripted.push('hang')
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
    expect(fixture.host.root.tools.get('subagent', run.agent)).to.equal(undefined)
    const { sections } = fixture.host.root.systemPrompt.assemble(run.agent)
    expect(sections.map((section) => section.name)).not.to.include('delegation')
    await run.dispose()
  })

  it('writes the delegation section in zh-CN when the tool is set to it', async () => {
    const fixture = await createBudgetFixture({ budget: { maxTokens: 900 }, subagentTool: { locale: 'zh-CN' } })
    fixture.host.scripted.push({ text: 'ok' })
    fixture.root.followup('hello')
    await fixture.root.whenIdle()
    expect(sectionsOf(fixture.host.scripted.requests[0]!.system)).to.include(
      '委派：你位于深度 0；你启动的子代理运行在深度 1。\n本委派树剩余：900 个 token、不限 次模型请求、不限 次子代理启动。',
    )
  })

  it('writes the delegation section in the locale a config update of the tool set, without a restart', async () => {
    const fixture = await createBudgetFixture({ budget: { maxTokens: 900 }, subagentTool: {} })
    const toolFiber = fixture.host.fibers.at(-1)!
    toolFiber.update({ locale: 'zh-CN' })
    await toolFiber
    fixture.host.scripted.push({ text: 'ok' })
    fixture.root.followup('hello')
    await fixture.root.whenIdle()
    expect(sectionsOf(fixture.host.scripted.requests[0]!.system)).to.include(
      '委派：你位于深度 0；你启动的子代理运行在深度 1。\n本委派树剩余：900 个 token、不限 次模型请求、不限 次子代理启动。',
    )
  })

  it('tells an agent one level above the cap that its subagents cannot delegate', async () => {
    const fixture = await createBudgetFixture({ depthPolicy: { maxDepth: 1 }, subagentTool: {} })
    fixture.host.scripted.push({ text: 'ok' })
    fixture.root.followup('hello')
    await fixture.root.whenIdle()
    const section = sectionsOf(fixture.host.scripted.requests[0]!.system).find((text) => text.startsWith('Delegation:'))
    expect(section).to.equal(
      'Delegation: you are at depth 0; a subagent you start runs at depth 1.\nThe deepest subagent allowed runs at depth 1.\nSubagents you start cannot start subagents of their own.\nLeft for this delegation tree: unlimited tokens, unlimited model requests, unlimited subagent starts.',
    )
  })

  it('hides subagent from a tree with no children left: schemas, lookup, execution and Code Mode bindings', async () => {
    const fixture = await createBudgetFixture({ budget: { maxChildren: 0 }, subagentTool: {} })
    const { tools } = fixture.host.root
    expect(tools.schemas(fixture.root).map((schema) => schema.name)).not.to.include('subagent')
    expect(tools.get('subagent', fixture.root)).to.equal(undefined)
    const result = await tools.execute({ name: 'subagent', arguments: { prompt: 'x' }, agent: fixture.root })
    expect([result.code, result.content]).to.deep.equal(['UNKNOWN_TOOL', [{ type: 'text', text: 'Error: unknown tool "subagent"' }]])
    const exec = { agent: fixture.root, token: Symbol('outer'), signal: new AbortController().signal } as unknown as ToolExecution
    expect(Object.keys(bindingsFor(tools, exec))).not.to.include('subagent')
  })

  it('hides subagent from a child whose reservation has no children left, while the tree still has some (SPEC §9)', async () => {
    const fixture = await createBudgetFixture({ budget: { maxChildren: 10 }, subagentTool: {} })
    fixture.host.scripted.push('hang')
    const run = await fixture.host.root.inprocessRun.spawn(fixture.request({ budget: { children: 0 } }))
    const { tools } = fixture.host.root
    expect(fixture.budget.remaining(run.agent).children).to.equal(0)
    expect(tools.schemas(run.agent).map((schema) => schema.name)).not.to.include('subagent')
    expect(tools.get('subagent', run.agent)).to.equal(undefined)
    const result = await tools.execute({ name: 'subagent', arguments: { prompt: 'x' }, agent: run.agent })
    expect([result.code, result.content]).to.deep.equal(['UNKNOWN_TOOL', [{ type: 'text', text: 'Error: unknown tool "subagent"' }]])
    expect(tools.get('subagent', fixture.root)?.name).to.equal('subagent')
    await run.dispose()
  })

  it('hides subagent once the tree has no tokens left, and shows it again when a config update raises the limit', async () => {
    const fixture = await createBudgetFixture({ budget: { maxTokens: 5 }, subagentTool: {} })
    fixture.host.scripted.push({ text: 'hi', usage: { inputTokens: 4, outputTokens: 1 } })
    fixture.root.followup('hello')
    await fixture.root.whenIdle()
    expect(fixture.host.root.tools.get('subagent', fixture.root)).to.equal(undefined)
    await fixture.fiber.update({ maxTokens: 50 })
    expect(fixture.host.root.tools.get('subagent', fixture.root)?.name).to.equal('subagent')
  })

  it('gives the delegation section with depth and cap, and no budget line, while only DepthPolicy is loaded', async () => {
    const fixture = await createFixture({ depthPolicy: { maxDepth: 2 } })
    const section = fixture.host.root.systemPrompt.assemble(fixture.parent).sections.find((entry) => entry.name === 'delegation')
    expect(section?.text).to.equal(
      'Delegation: you are at depth 0; a subagent you start runs at depth 1.\nThe deepest subagent allowed runs at depth 2.',
    )
  })

  it('gives no delegation section while neither DepthPolicy nor TreeBudget is loaded', async () => {
    const fixture = await createFixture()
    fixture.host.scripted.push({ text: 'ok' })
    fixture.parent.followup('hello')
    await fixture.parent.whenIdle()
    expect(fixture.host.scripted.requests[0]!.system).not.to.include('Delegation:')
    expect(fixture.host.scripted.requests[0]!.tools?.map((tool) => tool.name)).to.deep.equal(['subagent'])
  })
})
