import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'chai'
import { SubagentDepthError } from '../../lib/errors.ts'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import { createFilesHost, type FilesHost, scriptedOptions } from './fixture.ts'

describe('a resumed child keeps its delegation depth', () => {
  let dir: string
  let host: FilesHost
  let childId: string

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'session-files-'))
    // the first host plays a process that ran a child and exited; the second resumes it
    const first = await createFilesHost(dir, {}, [InProcessRun])
    const parent = await first.agent()
    first.scripted.push({ text: 'child answer' })
    const run = await first.root.inprocessRun.spawn({ parent, prompt: 'task', signal: new AbortController().signal, maxDepth: 2 })
    expect((await run.result).stopReason).to.equal('completed')
    expect(run.agent.session.header.delegationDepth).to.equal(1)
    childId = run.id
    await run.dispose()
    await first.end()
    host = await createFilesHost(dir, {}, [InProcessRun])
    host.defer(() => rm(dir, { recursive: true, force: true }))
  })

  it('rejects a grandchild beyond maxDepth 1 with SubagentDepthError', async () => {
    const baseline = host.snapshot()
    const handle = await host.root.agents.resume(childId, { agentOptions: scriptedOptions })
    expect(handle.agent.session.header.delegationDepth).to.equal(1)
    expect(handle.agent.options.subagentDepth).to.equal(undefined)
    const error = await host.root.inprocessRun
      .spawn({ parent: handle.agent, prompt: 'deeper', signal: new AbortController().signal, maxDepth: 1 })
      .then(
        () => expect.fail('spawn fulfilled'),
        (reason: unknown) => reason,
      )
    expect(error).to.be.instanceOf(SubagentDepthError)
    expect((error as SubagentDepthError).message).to.equal('subagent depth 2 exceeds maxDepth 1')
    expect(error).to.include({ attemptedDepth: 2, maxDepth: 1 })
    await handle.dispose()
    await host.files.flush()
    expect(host.snapshot()).to.deep.equal(baseline)
    host.invariants.check()
  })

  it('gives a grandchild of the resumed child depth 2', async () => {
    const baseline = host.snapshot()
    const handle = await host.root.agents.resume(childId, { agentOptions: scriptedOptions })
    host.scripted.push({ text: 'grandchild answer' })
    const run = await host.root.inprocessRun.spawn({
      parent: handle.agent,
      prompt: 'deeper',
      signal: new AbortController().signal,
      maxDepth: 2,
    })
    expect(await run.result).to.include({ stopReason: 'completed' })
    expect(run.agent.session.header.delegationDepth).to.equal(2)
    await run.dispose()
    await handle.dispose()
    await host.files.flush()
    expect((await host.files.load(run.id)).header.delegationDepth).to.equal(2)
    expect(host.snapshot()).to.deep.equal(baseline)
    expect(host.files.tracked()).to.deep.equal([])
    host.invariants.check()
  })
})
