import { expect } from 'chai'
import { SubagentBudgetError, SubagentDepthError, UnsupportedCapabilityError } from '../../lib/errors.ts'
import type { SubagentStartRequest, ToolDefinition } from '../../lib/types.ts'
import { AgentDefinitionError } from '../../plugins/agent-definitions/index.ts'
import Approvals from '../../plugins/approvals/index.ts'
import StructuredOutput from '../../plugins/structured-output/index.ts'
import TreeBudget from '../../plugins/tree-budget/index.ts'
import { createDriverHost } from '../support/driver.ts'
import { rejectionOf } from '../support/scene.ts'
import { type DefinitionScene, definitionScene, definitionText } from './fixture.ts'

function tool(name: string): ToolDefinition {
  return { name, description: name, parameters: { type: 'object' }, execute: () => name }
}

function request(scene: DefinitionScene, extra: Partial<SubagentStartRequest> = {}): SubagentStartRequest {
  return { parent: scene.parent, prompt: 'do the task', signal: new AbortController().signal, ...extra }
}

/** Names of the tools a model request carried. */
function toolsOf(scene: DefinitionScene, index: number): string[] | undefined {
  return scene.host.scripted.requests[index]?.tools?.map((schema) => schema.name)
}

const reviewer = definitionText(
  {
    name: 'reviewer',
    description: 'Reviews a change and returns a verdict.',
    model: 'review-model',
    maxSteps: 3,
    tools: ['read_file', 'mcp__gh__*'],
    disallowedTools: ['mcp__gh__merge'],
  },
  'You are a strict reviewer.',
)

async function toolScene(files: Record<string, string> = { 'reviewer.md': reviewer }) {
  const scene = await definitionScene({ files })
  for (const name of ['read_file', 'write_file', 'mcp__gh__list', 'mcp__gh__merge', 'mcp__other__x']) scene.host.root.tools.register(tool(name))
  return scene
}

describe('AgentDefinitions: starting a child from a definition (SPEC §12)', () => {
  it('gives the child the definition’s persona, agent options and tool filter with prefixes expanded', async () => {
    const scene = await toolScene()
    scene.host.scripted.push({ text: 'looks fine' })
    const run = await scene.host.root.inprocessRun.spawn(request(scene, { agent: 'reviewer' }))
    await run.result
    const sent = scene.host.scripted.requests[0]!
    expect(sent.system).to.equal('You are a strict reviewer.')
    expect(sent.model).to.equal('review-model')
    expect(run.agent.options).to.include({ model: 'review-model', maxSteps: 3, provider: 'scripted' })
    expect(toolsOf(scene, 0)).to.deep.equal(['mcp__gh__list', 'read_file'])
    await run.dispose()
  })

  it('records the definition’s name in the child’s header', async () => {
    const scene = await toolScene()
    scene.host.scripted.push({ text: 'ok' })
    const run = await scene.host.root.inprocessRun.spawn(request(scene, { agent: 'reviewer' }))
    expect(run.agent.session.header.agent).to.equal('reviewer')
    await run.result
    await run.dispose()
  })

  it('rejects a definition’s approval policy as unsupported without Approvals', async () => {
    const scene = await definitionScene({ files: { 'a.md': definitionText({ name: 'careful', description: 'Careful.', approval: { default: 'ask' } }) } })
    const error = await rejectionOf(scene.host.root.inprocessRun.spawn(request(scene, { agent: 'careful' })))
    expect(error).to.be.instanceOf(UnsupportedCapabilityError)
    expect((error as Error).message).to.equal('subagent runtime does not support the "approval" capability')
  })

  it('lets the request override the persona and agent options and only narrow the tools', async () => {
    const scene = await toolScene()
    scene.host.scripted.push({ text: 'ok' })
    const run = await scene.host.root.inprocessRun.spawn(
      request(scene, { agent: 'reviewer', persona: 'Be brief.', agentOptions: { model: 'other' }, toolFilter: { allow: ['read_file', 'write_file'] } }),
    )
    await run.result
    const sent = scene.host.scripted.requests[0]!
    expect(sent.system).to.equal('Be brief.')
    expect(sent.model).to.equal('other')
    // write_file passes the request's filter but not the definition's: a request never widens
    expect(toolsOf(scene, 0)).to.deep.equal(['read_file'])
    await run.dispose()
  })

  it('caps the tools by the parent’s with inheritRestrictions', async () => {
    const scene = await toolScene()
    scene.parent.ctx.tools.restrict({ deny: ['read_file'] })
    scene.host.scripted.push({ text: 'ok' })
    const run = await scene.host.root.inprocessRun.spawn(request(scene, { agent: 'reviewer', inheritRestrictions: true }))
    await run.result
    expect(toolsOf(scene, 0)).to.deep.equal(['mcp__gh__list'])
    await run.dispose()
  })

  it('takes the smaller of the definition’s maxDepth and the request’s', async () => {
    const scene = await toolScene({ 'a.md': definitionText({ name: 'leaf', description: 'No children.', maxDepth: 0 }) })
    const error = await rejectionOf(scene.host.root.inprocessRun.spawn(request(scene, { agent: 'leaf', maxDepth: 5 })))
    expect(error).to.be.instanceOf(SubagentDepthError)
    expect((error as Error).message).to.equal('subagent depth 1 exceeds maxDepth 0')
    expect(scene.host.root.agents.list()).to.have.length(1)
  })

  it('rejects an unknown name with a did-you-mean, before anything is created', async () => {
    const scene = await toolScene()
    const error = await rejectionOf(scene.host.root.inprocessRun.spawn(request(scene, { agent: 'reviwer' })))
    expect(error).to.be.instanceOf(TypeError)
    expect((error as Error).message).to.equal('unknown agent definition "reviwer" (did you mean "reviewer"?)')
    const far = await rejectionOf(scene.host.root.inprocessRun.spawn(request(scene, { agent: 'zzz' })))
    expect((far as Error).message).to.equal('unknown agent definition "zzz"')
    expect(scene.host.root.agents.list()).to.have.length(1)
  })

  it('rejects a start from a definition whose tools match no tool, naming the file', async () => {
    const scene = await definitionScene({ files: { 'a.md': definitionText({ name: 'reader', description: 'Reads.', tools: ['read_fiel'] }) } })
    const error = await rejectionOf(scene.host.root.inprocessRun.spawn(request(scene, { agent: 'reader' })))
    expect(error).to.be.instanceOf(AgentDefinitionError)
    expect((error as Error).message).to.equal(`agent definition "reader" (${scene.folder}/a.md): tools "read_fiel" matches no tool`)
    expect(scene.host.root.agents.list()).to.have.length(1)
  })

  it('rejects a misspelt disallowedTools entry instead of leaving the tool allowed', async () => {
    const scene = await toolScene({ 'a.md': definitionText({ name: 'safe', description: 'Safe.', disallowedTools: ['write_fiel'] }) })
    const error = await rejectionOf(scene.host.root.inprocessRun.spawn(request(scene, { agent: 'safe' })))
    expect((error as Error).message).to.equal(`agent definition "safe" (${scene.folder}/a.md): disallowedTools "write_fiel" matches no tool`)
  })

  it('requires the child to answer with the definition’s output schema', async () => {
    const verdict = { type: 'object', properties: { verdict: { type: 'string', enum: ['approve', 'reject'] } }, required: ['verdict'] }
    const scene = await definitionScene({ plugins: [StructuredOutput], files: { 'a.md': definitionText({ name: 'judge', description: 'Judges.', outputSchema: verdict }) } })
    scene.host.scripted.push({ toolCalls: [{ name: 'structured_output', arguments: '{"verdict":"approve"}' }] })
    const run = await scene.host.root.inprocessRun.spawn(request(scene, { agent: 'judge' }))
    expect((await run.result).structured).to.deep.equal({ verdict: 'approve' })
    await run.dispose()
  })

  it('rejects a definition’s output schema as unsupported without StructuredOutput', async () => {
    const scene = await definitionScene({ files: { 'a.md': definitionText({ name: 'judge', description: 'Judges.', outputSchema: { type: 'object' } }) } })
    const error = await rejectionOf(scene.host.root.inprocessRun.spawn(request(scene, { agent: 'judge' })))
    expect(error).to.be.instanceOf(UnsupportedCapabilityError)
    expect((error as Error).message).to.equal('subagent runtime does not support the "outputSchema" capability')
  })

  it('reserves the smaller of each budget limit of the definition and the request', async () => {
    const scene = await definitionScene({
      plugins: [[TreeBudget, { maxTokens: 100 }]],
      files: { 'a.md': definitionText({ name: 'cheap', description: 'Cheap.', budget: { tokens: 30, children: 5 } }) },
    })
    scene.host.scripted.push({ text: 'ok' })
    const run = await scene.host.root.inprocessRun.spawn(request(scene, { agent: 'cheap', budget: { tokens: 200, children: 2 } }))
    expect(scene.host.root.treeBudget.remaining(run.agent)).to.include({ tokens: 30, children: 2 })
    await run.result
    await run.dispose()
  })

  it('rejects a start whose definition reserves more than the tree has left', async () => {
    const scene = await definitionScene({
      plugins: [[TreeBudget, { maxTokens: 100 }]],
      files: { 'a.md': definitionText({ name: 'greedy', description: 'Greedy.', budget: { tokens: 500 } }) },
    })
    const error = await rejectionOf(scene.host.root.inprocessRun.spawn(request(scene, { agent: 'greedy' })))
    expect(error).to.be.instanceOf(SubagentBudgetError)
    expect((error as Error).message).to.equal('subagent budget exhausted: tokens 0 of 100')
  })

  it('rejects a name when no plugin serves definitions', async () => {
    const host = await createDriverHost()
    const error = await rejectionOf(host.root.inprocessRun.spawn(host.request({ agent: 'reviewer' })))
    expect(error).to.be.instanceOf(UnsupportedCapabilityError)
    expect((error as Error).message).to.equal('subagent runtime does not support the "agent" capability')
  })

  it('rejects an agent field that is not a string', async () => {
    const host = await createDriverHost()
    const error = await rejectionOf(host.root.inprocessRun.spawn(host.request({ agent: 5 as unknown as string })))
    expect((error as Error).message).to.equal('subagent request agent must be a string')
  })
})

describe('AgentDefinitions: a definition’s approval policy with Approvals (SPEC §11.1, §12)', () => {
  const shell: ToolDefinition = { name: 'shell', description: 'runs', parameters: { type: 'object' }, execute: () => 'ran' }

  /** The child's `tool/result` texts after it called `shell` once. */
  async function childShellResult(scene: DefinitionScene, agent: string): Promise<string[]> {
    scene.host.scripted.push({ toolCalls: [{ name: 'shell', arguments: '{}' }] }, { text: 'done' })
    const run = await scene.host.root.inprocessRun.spawn(request(scene, { agent }))
    await run.result
    const texts = run.agent.session.events
      .filter((event) => event.type === 'tool/result')
      .map((event) => ((event.data as { content: { text: string }[] }).content[0]!.text))
    await run.dispose()
    return texts
  }

  it('narrows what the child may do: a definition’s deny holds under an allowing deployment', async () => {
    const scene = await definitionScene({
      plugins: [[Approvals, {}]],
      files: { 'a.md': definitionText({ name: 'locked', description: 'Locked.', approval: { rules: [{ tool: 'shell', decision: 'deny' }] } }) },
    })
    scene.host.root.tools.register(shell)
    expect(await childShellResult(scene, 'locked')).to.deep.equal(['Error: tool call "shell" was denied: denied by policy'])
  })

  it('never widens: a definition that allows everything keeps the parent’s deny', async () => {
    const scene = await definitionScene({
      plugins: [[Approvals, {}]],
      files: { 'a.md': definitionText({ name: 'open', description: 'Open.', approval: { default: 'allow', rules: [{ tool: 'shell', decision: 'allow' }] } }) },
    })
    scene.host.root.tools.register(shell)
    const { agent: parent } = await scene.host.create({ agentOptions: { approval: { rules: [{ tool: 'shell', decision: 'deny' }] } } })
    scene.host.scripted.push({ toolCalls: [{ name: 'shell', arguments: '{}' }] }, { text: 'done' })
    const run = await scene.host.root.inprocessRun.spawn({ parent, prompt: 'go', signal: new AbortController().signal, agent: 'open' })
    await run.result
    const texts = run.agent.session.events.filter((event) => event.type === 'tool/result').map((event) => (event.data as { content: { text: string }[] }).content[0]!.text)
    expect(texts).to.deep.equal(['Error: tool call "shell" was denied: denied by policy'])
    await run.dispose()
  })
})
