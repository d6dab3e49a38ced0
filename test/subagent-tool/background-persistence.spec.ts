import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'chai'
import { BACKGROUND_DELIVERED_EVENT, interruptedBackgroundRuns } from '../../lib/delegation/background-record.ts'
import { SessionFiles } from '../../plugins/session-files/index.ts'
import { createFixture, textOf } from './fixture.ts'
import { installRoutedModel, ROUTED_PROVIDER } from './routed-model.ts'

describe('subagent tool: background children in persisted sessions', () => {
  let dir: string

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'background-sessions-'))
  })

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('shows after a resume that a background child was interrupted by the end of its parent', async () => {
    const fixture = await createFixture({ parent: { provider: ROUTED_PROVIDER } })
    const { root } = fixture.host
    const files = root.plugin(SessionFiles, { dir })
    await files
    const model = installRoutedModel(root, (request) => request.agent === fixture.parent)
    const results: string[] = []
    fixture.parent.ctx.on('tools/result', (exec, result) => void (exec.name === 'subagent' && results.push(textOf(result))))
    model.child('never finishes')
    model.child('finishes')
    model.parent(
      {
        toolCalls: [
          { id: 'call_1', name: 'subagent', arguments: { prompt: 'never finishes', label: 'lost', background: true } },
          { id: 'call_2', name: 'subagent', arguments: { prompt: 'finishes', label: 'kept', background: true } },
        ],
      },
      { text: 'both started' },
      { text: 'noted' },
    )
    fixture.parent.followup('start two')
    await fixture.parent.whenIdle()
    const [lost, kept] = root.subagentTool.pending(fixture.parent)
    expect([lost?.label, kept?.label]).to.deep.equal(['lost', 'kept'])
    const keptDelivered = new Promise<void>((resolve) => {
      const off = root.on('session/event', (_session, event) => {
        if (event.type === BACKGROUND_DELIVERED_EVENT) {
          off()
          resolve()
        }
      })
    })
    model.child('finishes').answer({ text: 'done' })
    await keptDelivered
    await fixture.parent.whenIdle()
    expect(root.subagentTool.pending(fixture.parent)).to.deep.equal([lost])
    const parentId = fixture.parent.id
    await root.agents.disposeAll()
    await root.sessionFiles.flush()
    const resumed = await root.agents.resume(parentId)
    expect(interruptedBackgroundRuns(resumed.agent.session.events)).to.deep.equal([{ runId: lost!.runId, label: 'lost' }])
    expect(root.subagentTool.pending(resumed.agent)).to.deep.equal([])
    await resumed.dispose()
    await files.dispose()
    await root.subagentTool.settled()
    expect(root.agents.list()).to.deep.equal([])
    expect(root.sessions.list()).to.deep.equal([])
  })
})
