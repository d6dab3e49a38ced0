import { expect } from 'chai'
import CodeMode from '../../plugins/code-mode/index.ts'
import { textOf } from '../support/scene.ts'
import { approvalScene } from './fixture.ts'

describe('Approvals and Code Mode (SPEC §11.2 with §1.5)', () => {
  it('asks about a tool a run_code program calls, as a call of the agent running the program', async function () {
    // the first sandbox of a process loads the interpreter: seconds on a loaded machine
    this.timeout(60_000)
    const s = await approvalScene({ rules: [{ tool: 'shell', decision: 'ask' }] }, [[CodeMode, {}]])
    s.tool('shell')
    const { agent } = await s.create()
    const result = s.root.tools.execute({ name: 'run_code', arguments: { code: 'return await tools.shell({})' }, agent, callId: 'outer' })
    const request = await s.nextAsked()
    expect(request).to.deep.include({ agentId: agent.id, tool: 'shell' })
    s.root.approvals.decide(request.id, { approved: false, reason: 'not from code either' })
    const text = textOf(await result)
    expect(text).to.contain('tool call "shell" was denied: not from code either')
    expect(s.ran).to.deep.equal([])
  })
})
