import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'chai'
import { createFilesHost } from './fixture.ts'

describe('header fields agent and approval survive a session file round trip', () => {
  it('resumes an agent with the agent name and approval policy it was created with', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'session-files-'))
    try {
      const approval = { default: 'ask' as const, rules: [{ tool: 'mcp__*', decision: 'deny' as const }] }
      // the first host plays a process that made the agent and exited; the second resumes it
      const first = await createFilesHost(dir)
      const { agent } = await first.create({ sessionId: 'kept', header: { agent: 'reviewer', approval } })
      const header = agent.session.header
      await first.end()
      const second = await createFilesHost(dir)
      const handle = await second.root.agents.resume('kept')
      expect(handle.agent.session.header).to.deep.equal(header)
      expect(Object.isFrozen(handle.agent.session.header.approval)).to.equal(true)
      await handle.dispose()
      await second.end()
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
