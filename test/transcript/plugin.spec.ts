import { expect } from 'chai'
import sinon from 'sinon'
import { InProcessRun } from '../../plugins/inprocess-run/index.ts'
import Transcript from '../../plugins/transcript/index.ts'
import { createHost, type Snapshot, type TestHost } from '../support/harness.ts'
import '../support/unhandled.ts'

describe('Transcript (the plugin)', () => {
  let host: TestHost
  let baseline: Snapshot
  let written: string
  let write: sinon.SinonStub

  beforeEach(async () => {
    host = await createHost()
    await host.root.plugin(InProcessRun)
    baseline = host.snapshot()
    written = ''
  })

  afterEach(async () => {
    write?.restore()
    await host.root.agents.disposeAll()
    expect(host.snapshot()).to.deep.equal(baseline)
  })

  /** Runs one scripted child of a fresh parent while stdout is captured; returns what was printed. */
  async function printedBy(answer: string): Promise<string> {
    const parent = await host.agent()
    host.scripted.push({ text: answer })
    written = ''
    write = sinon.stub(process.stdout, 'write').callsFake((chunk: string | Uint8Array) => {
      written += String(chunk)
      return true
    })
    try {
      const run = await host.root.inprocessRun.spawn({ parent, prompt: 'Go.', signal: AbortSignal.timeout(10_000) })
      await run.result
      await run.dispose()
    } finally {
      write.restore()
    }
    return written
  }

  it('prints a run to stdout while loaded, nothing once unloaded, and again once reloaded with a new config', async () => {
    const first = host.root.plugin(Transcript, { width: 100, maxLines: 14 })
    await first
    expect(await printedBy('first answer')).to.include('first answer')
    await first.dispose()
    expect(await printedBy('unloaded answer')).to.equal('')
    const second = host.root.plugin(Transcript, { width: 60, maxLines: 2, verbosity: 'quiet' })
    await second
    expect(await printedBy('quiet answer')).to.equal('')
    second.update({ width: 60, maxLines: 2, verbosity: 'normal' })
    await new Promise((resolve) => setImmediate(resolve))
    expect(await printedBy('updated answer')).to.include('updated answer')
    await second.dispose()
  })
})
