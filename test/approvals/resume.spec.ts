import { expect } from 'chai'
import type { Plugin } from 'cordis'
import Approvals from '../../plugins/approvals/index.ts'
import { crashCopy, durableHost } from '../durable/fixture.ts'
import { typesOf } from '../support/scene.ts'
import { eventsOf, toolResults } from './fixture.ts'

describe('Approvals across a crash and resumeTree (SPEC §11, §14)', () => {
  it('never runs a call that was waiting for a decision when the process stopped', async () => {
    const ran: string[] = []
    const shell = { name: 'shell', description: 'Shell.', parameters: { type: 'object' }, execute: () => void ran.push('shell') }
    const first = await durableHost(undefined, [[Approvals as Plugin, { rules: [{ tool: 'shell', decision: 'ask' }] }]])
    first.root.tools.register(shell)
    const root = await first.agent()
    first.scripted.push({ toolCalls: [{ id: 'call_1', name: 'shell', arguments: '{}' }] })
    const asked = new Promise<string>((resolve) => first.on('approval/asked', (request) => resolve(request.id)))
    root.followup('go')
    const requestId = await asked
    // the process stops here, its call still waiting
    const dir = await crashCopy(first)
    first.root.approvals.decide(requestId, { approved: false })
    await root.whenIdle()

    const second = await durableHost(dir, [[Approvals as Plugin, { rules: [{ tool: 'shell', decision: 'ask' }] }]])
    second.root.tools.register(shell)
    const tree = await second.root.inprocessRun.resumeTree(root.id)
    expect(eventsOf(tree.root, 'approval/decided')).to.deep.equal([{ requestId, approved: false, reason: 'interrupted', by: 'resume' }])
    expect(typesOf(tree.root).slice(-4)).to.deep.equal(['approval/requested', 'approval/decided', 'tool/result', 'turn/end'])
    expect(toolResults(tree.root)).to.deep.equal([['shell', 'Error: interrupted before the tool returned']])
    expect(second.root.approvals.pending()).to.deep.equal([])
    expect(ran).to.deep.equal([])
    await tree.dispose()
  })
})
