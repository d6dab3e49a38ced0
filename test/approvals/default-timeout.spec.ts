import { expect } from 'chai'
import { textOf } from '../../lib/content.ts'
import type { SubagentRun } from '../../lib/types.ts'
import { type ApprovalHost, askingConfig, createApprovalHost } from '../support/approvals.ts'
import '../support/unhandled.ts'

describe('Approvals: the default timeout (setDefaultTimeout, set by the CLI when no one can answer)', () => {
  let host: ApprovalHost
  const runs: SubagentRun[] = []

  beforeEach(async () => {
    host = await createApprovalHost()
  })

  afterEach(async () => {
    for (const run of runs.splice(0)) await run.dispose()
    await host.root.agents.disposeAll()
  })

  const start = async () => {
    const run = await host.child('release', [{ target: 'production' }])
    runs.push(run)
    return run
  }

  it('decides an asked call by timeout when the config sets no timeout', async () => {
    const decided: string[] = []
    host.root.on('approval/decided', (_request, decision) => void decided.push(`${decision.by}: ${decision.reason}`))
    host.root.approvals.setDefaultTimeout(20)
    const run = await start()
    expect(textOf((await run.result).output)).to.equal('Error: tool call "deploy" was denied: no decision within 20 ms')
    expect(decided).to.deep.equal(['timeout: no decision within 20 ms'])
  })

  it("leaves the config's own timeout in charge", async () => {
    await host.approvalsFiber.update(askingConfig({ timeout: 15 }))
    host.root.approvals.setDefaultTimeout(600_000)
    const run = await start()
    expect(textOf((await run.result).output)).to.equal('Error: tool call "deploy" was denied: no decision within 15 ms')
  })

  it('arms a request already waiting when it is set, and none once it is removed', async () => {
    const run = await start()
    while (!host.root.approvals.pending().length) await new Promise((resolve) => setTimeout(resolve, 2))
    host.root.approvals.setDefaultTimeout(10)
    expect(textOf((await run.result).output)).to.equal('Error: tool call "deploy" was denied: no decision within 10 ms')
    host.root.approvals.setDefaultTimeout(undefined)
    const second = await start()
    await new Promise((resolve) => setTimeout(resolve, 40))
    const [request] = host.root.approvals.pending()
    expect(request?.tool).to.equal('deploy')
    host.root.approvals.decide(request!.id, { approved: true })
    expect(textOf((await second.result).output)).to.equal('deployed to production')
  })

  it('rejects a default timeout that is not a positive integer, keeping the one it had', async () => {
    host.root.approvals.setDefaultTimeout(25)
    for (const bad of [0, -1, 1.5, Number.NaN, '100' as unknown as number]) {
      expect(() => host.root.approvals.setDefaultTimeout(bad)).to.throw(TypeError, 'approvals default timeout must be a positive integer of ms')
    }
    const run = await start()
    expect(textOf((await run.result).output)).to.equal('Error: tool call "deploy" was denied: no decision within 25 ms')
  })
})
