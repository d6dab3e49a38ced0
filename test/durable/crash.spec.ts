import { spawn } from 'node:child_process'
import { access, mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'chai'
import { BACKGROUND_DELIVERED_EVENT } from '../../lib/delegation/background-record.ts'
import SubagentTool from '../../plugins/subagent-tool/index.ts'
import { projectRoot } from '../support/cli.ts'
import { durableHost, removeAfterTest } from './fixture.ts'

/**
 * Runs the crash host on `dir` in its own OS process, waits for its `ready` line, kills it with
 * SIGKILL right there (between `deploy`'s body and its `tool/result`) and resolves with the ids it
 * reported once the process is gone.
 */
function crashHost(dir: string): Promise<{ rootId: string; childId: string; signal: NodeJS.Signals | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/durable/fixtures/crash-host.ts', dir], {
      cwd: projectRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    let ids: { rootId: string; childId: string } | undefined
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.stdout.on('data', (chunk) => {
      stdout += chunk
      const match = /^ready (\S+) (\S+)$/m.exec(stdout)
      if (match && !ids) {
        ids = { rootId: match[1]!, childId: match[2]! }
        child.kill('SIGKILL')
      }
    })
    child.on('error', reject)
    child.on('close', (_code, signal) => {
      if (!ids) return reject(new Error(`the crash host ended before it was ready:\n${stderr}`))
      resolve({ ...ids, signal })
    })
  })
}

describe('a host killed with SIGKILL mid-tree, resumed in another process (SPEC §14)', function () {
  // a real process starts under tsx: seconds on a loaded machine
  this.timeout(60_000)
  let dir: string

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'killed-tree-'))
    removeAfterTest(dir)
  })

  it("shows the call whose body ran but whose result was never written as interrupted, never as success, and delivers the unfinished background child once", async () => {
    const { rootId, childId, signal } = await crashHost(dir)
    expect(signal).to.equal('SIGKILL')
    // the body did its work before the kill
    await access(join(dir, 'deployed'))

    const host = await durableHost(dir, [SubagentTool])
    let deployed = 0
    host.root.tools.register({
      name: 'deploy',
      description: 'deploys the release',
      parameters: { type: 'object' },
      execute: async () => {
        deployed++
        return { isError: false, content: [] }
      },
    })
    host.scripted.push({ text: 'the deploy was interrupted; I will check before retrying' })
    const tree = await host.root.inprocessRun.resumeTree(rootId)
    expect(tree.agents.map((agent) => agent.id)).to.deep.equal([childId])
    const results = tree.root.session.events.filter((event) => event.type === 'tool/result').map((event) => event.data)
    expect(results).to.deep.equal([
      {
        turn: 1,
        step: 1,
        callId: 'call_bg',
        name: 'subagent',
        isError: false,
        content: [{ type: 'text', text: `subagent "digger" started in the background as run ${childId}; its result will arrive as a message when it finishes.` }],
      },
      {
        turn: 1,
        step: 1,
        callId: 'call_deploy',
        name: 'deploy',
        isError: true,
        content: [{ type: 'text', text: 'Error: interrupted before the tool returned' }],
      },
    ])
    const [firstEnd] = tree.root.session.events.filter((event) => event.type === 'turn/end')
    expect(firstEnd!.data).to.deep.equal({ turn: 1, reason: { kind: 'interrupted' } })

    await host.root.subagentTool.settled(tree.root)
    await tree.root.whenIdle()
    const deliveries = tree.root.session.events.filter(
      (event) => event.type === 'user/message' && (event.data as { source: { kind: string } }).source.kind === 'plugin',
    )
    expect(deliveries.map((event) => (event.data as { content: { text: string }[] }).content[0]!.text)).to.deep.equal([
      `Background subagent "digger" (run ${childId}) finished:\nError: subagent run failed\nDiagnostic: the process stopped before the run finished\nPartial output before the run ended:\npartial`,
    ])
    expect(tree.root.session.events.filter((event) => event.type === BACKGROUND_DELIVERED_EVENT)).to.have.length(1)
    // nothing ran again because of the resume
    expect(deployed).to.equal(0)
    await tree.dispose()
  })
})
