import { expect } from 'chai'
import SubagentTool from '../../plugins/subagent-tool/index.ts'
import Tracing from '../../plugins/tracing/index.ts'
import { spanRecorder } from '../tracing/recorder.ts'
import { definitionScene, definitionText } from './fixture.ts'

const files = { 'researcher.md': definitionText({ name: 'researcher', description: 'Finds facts.' }, 'You research.') }

describe('AgentDefinitions: observers see the definition a child was started from', () => {
  it('puts the name in the run info of subagent/start and subagent/end', async () => {
    const { host, parent } = await definitionScene({ plugins: [SubagentTool], files })
    const seen: (string | undefined)[] = []
    host.on('subagent/start', (info) => void seen.push(info.agent))
    host.on('subagent/end', (info) => void seen.push(info.agent))
    host.scripted.push({ toolCalls: [{ name: 'subagent', arguments: { prompt: 'find it', agent: 'researcher' } }] }, { text: 'found' }, { text: 'done' })
    parent.followup('delegate')
    await parent.whenIdle()
    expect(seen).to.deep.equal(['researcher', 'researcher'])
  })

  it('sets subagent.agent on the run span', async () => {
    const recorder = spanRecorder()
    recorder.reset()
    const { host, parent } = await definitionScene({ plugins: [SubagentTool, [Tracing, {}]], files })
    host.scripted.push({ toolCalls: [{ name: 'subagent', arguments: { prompt: 'find it', agent: 'researcher', label: 'facts' } }] }, { text: 'found' }, { text: 'done' })
    parent.followup('delegate')
    await parent.whenIdle()
    const run = recorder.spans().find((span) => span.name === 'invoke_agent facts')
    expect(run?.attributes).to.include({ 'subagent.agent': 'researcher', 'gen_ai.agent.name': 'facts' })
  })
})
