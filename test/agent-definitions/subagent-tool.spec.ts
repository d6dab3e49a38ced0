import { rmSync } from 'node:fs'
import { expect } from 'chai'
import AgentDefinitions from '../../plugins/agent-definitions/index.ts'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import SubagentTool, { TOOL_DESCRIPTION } from '../../plugins/subagent-tool/index.ts'
import { scene } from '../support/scene.ts'
import { definitionScene, definitionText, tempFolder, writeDefinition } from './fixture.ts'

const files = {
  'researcher.md': definitionText({ name: 'researcher', description: 'Finds facts.\nNever edits.' }, 'You research.'),
  'reviewer.md': definitionText({ name: 'reviewer', description: 'Reviews a change.', background: true }),
}

function subagentSchema(host: { root: { tools: { get(name: string): unknown } } }) {
  return host.root.tools.get('subagent') as { description: string; parameters: { properties: Record<string, unknown> } }
}

describe('AgentDefinitions: the subagent tool offers the definitions (SPEC §12)', () => {
  it('lists each definition as "- <name>: <description>" and takes its name as an enum', async () => {
    const { host } = await definitionScene({ plugins: [SubagentTool], files })
    const schema = subagentSchema(host)
    expect(schema.description).to.equal(
      `${TOOL_DESCRIPTION}\n\nAgent definitions you can name as \`agent\`:\n- researcher: Finds facts. Never edits.\n- reviewer: Reviews a change.`,
    )
    expect(schema.parameters.properties.agent).to.include({ type: 'string' })
    expect((schema.parameters.properties.agent as { enum: string[] }).enum).to.deep.equal(['researcher', 'reviewer'])
  })

  it('has no agent parameter and the plain description while no definition exists', async () => {
    const { host } = await definitionScene({ plugins: [SubagentTool] })
    const schema = subagentSchema(host)
    expect(schema.description).to.equal(TOOL_DESCRIPTION)
    expect(schema.parameters.properties).to.not.have.property('agent')
  })

  it('refreshes the parameter and the description for the next model request when a file is added', async () => {
    const folder = tempFolder()
    const host = await scene({ plugins: [InProcessRun, SubagentTool, [AgentDefinitions, { dirs: [folder], debounceMs: 20 }]] })
    host.defer(() => rmSync(folder, { recursive: true, force: true }))
    const { agent: parent } = await host.create()
    const changed = new Promise<void>((resolve) => {
      const off = host.root.on('subagent/catalog-changed', () => {
        off()
        resolve()
      })
    })
    writeDefinition(folder, 'auditor.md', definitionText({ name: 'auditor', description: 'Audits.' }))
    await changed
    host.scripted.push({ text: 'hi' })
    parent.followup('hello')
    await parent.whenIdle()
    const sent = host.scripted.requests[0]!.tools!.find((schema) => schema.name === 'subagent')!
    expect(sent.description.endsWith('\n- auditor: Audits.')).to.equal(true)
    expect((sent.parameters.properties as Record<string, { enum?: string[] }>).agent?.enum).to.deep.equal(['auditor'])
  })

  it('starts the child the parent model names, from its definition', async () => {
    const { host, parent } = await definitionScene({ plugins: [SubagentTool], files })
    host.scripted.push({ toolCalls: [{ id: 'c1', name: 'subagent', arguments: { prompt: 'find it', agent: 'researcher' } }] }, { text: 'found' }, { text: 'parent done' })
    parent.followup('delegate')
    await parent.whenIdle()
    expect(host.scripted.requests[1]!.system).to.equal('You research.')
    const result = parent.session.events.find((event) => event.type === 'tool/result')!.data as { content: unknown }
    expect(result.content).to.deep.equal([{ type: 'text', text: 'found' }])
  })

  it('runs a definition marked background in the background unless the call says otherwise', async () => {
    const { host, parent } = await definitionScene({ plugins: [SubagentTool], files })
    host.scripted.push({ toolCalls: [{ id: 'c1', name: 'subagent', arguments: { prompt: 'review', agent: 'reviewer', label: 'rev' } }] }, { text: 'parent waits' })
    parent.followup('delegate')
    await parent.whenIdle()
    const result = parent.session.events.find((event) => event.type === 'tool/result')!.data as { content: { text: string }[] }
    expect(result.content[0]!.text).to.match(/^subagent "rev" started in the background as run /)
    host.scripted.push({ text: 'approved' }, { text: 'parent done' })
    await host.root.subagentTool.settled(parent)
    await parent.whenIdle()
  })
})
