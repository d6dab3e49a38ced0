import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { expect } from 'chai'
import { noProviderMessage } from '../../plugins/tracing/index.ts'
import { projectRoot } from '../support/cli.ts'

describe('Tracing without a tracer provider', () => {
  it('registers no listener and says so once, so the host pays nothing', async () => {
    // a fresh process: this one has the in-memory provider registered globally
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'test/tracing/no-provider-host.ts'], {
      cwd: projectRoot,
    })
    const outcome = JSON.parse(stdout.trim())
    expect(outcome.after).to.equal(outcome.before)
    expect(outcome.logged.filter((line: string) => line.includes(noProviderMessage))).to.have.length(1)
  })
})
