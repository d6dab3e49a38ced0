import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'chai'
import type { Plugin } from 'cordis'
import type { Agent, SubagentStartRequest } from '../../lib/types.ts'
import Approvals from '../../plugins/approvals/index.ts'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import { SessionFiles } from '../../plugins/session-files/index.ts'
import StructuredOutput from '../../plugins/structured-output/index.ts'
import { scene } from '../support/scene.ts'
import { type ApprovalScene, approvalScene, eventsOf, scriptCalls, toolResults } from './fixture.ts'

const delegationPolicy =
  'You are a delegated subagent: your permission scope was fixed when you were started and cannot be widened from inside this session — operations that require approval are rejected automatically. When the task needs access beyond that scope, do not retry the denied operation; state the limitation in your reply so the delegating agent can handle it.'

function request(parent: Agent, extra: Partial<SubagentStartRequest> = {}): SubagentStartRequest {
  return { parent, prompt: 'do the task', signal: new AbortController().signal, ...extra }
}

/** Starts a child whose model calls `tool` once, then answers `done`. */
async function childCalling(s: ApprovalScene, parent: Agent, tool: string, extra: Partial<SubagentStartRequest> = {}) {
  scriptCalls(s, [[tool]])
  return s.root.inprocessRun.spawn(request(parent, extra))
}

describe('Approvals children: route (SPEC §11.3)', () => {
  it('routes a child request to the tree queue with its path, depth and label', async () => {
    const s = await approvalScene({ rules: [{ tool: 'shell', decision: 'ask' }] })
    s.tool('shell')
    const { agent: root } = await s.create()
    const run = await childCalling(s, root, 'shell', { label: 'fixer' })
    const asked = await s.nextAsked()
    expect(asked).to.deep.include({ agentId: run.id, rootId: root.id, depth: 1, label: 'fixer', tool: 'shell' })
    expect(asked.path).to.deep.equal([root.id, run.id])
    expect(s.root.approvals.pending(root.id)).to.deep.equal([asked])
    s.root.approvals.decide(asked.id, { approved: true })
    expect((await run.result).stopReason).to.equal('completed')
    expect(toolResults(run.agent)).to.deep.equal([['shell', 'shell ran']])
    expect(eventsOf(run.agent, 'approval/requested')).to.have.length(1)
    expect(eventsOf(root, 'approval/requested')).to.deep.equal([])
    await run.dispose()
  })

  it('gives a grandchild request the whole path from the root', async () => {
    const s = await approvalScene({ rules: [{ tool: 'shell', decision: 'ask' }] })
    s.tool('shell')
    const { agent: root } = await s.create()
    s.scripted.push({ text: 'child idle' })
    const child = await s.root.inprocessRun.spawn(request(root))
    await child.result
    const grandchild = await childCalling(s, child.agent, 'shell')
    const asked = await s.nextAsked()
    expect(asked.path).to.deep.equal([root.id, child.id, grandchild.id])
    expect(asked).to.deep.include({ rootId: root.id, depth: 2 })
    s.root.approvals.decide(asked.id, { approved: true })
    await grandchild.result
    await child.dispose()
  })
})

describe('Approvals children: deny (SPEC §11.3)', () => {
  it('turns ask into deny in a child with the pinned reason, asking nothing', async () => {
    const s = await approvalScene({ default: 'ask', children: 'deny' })
    s.tool('shell')
    const { agent: root } = await s.create()
    const run = await childCalling(s, root, 'shell')
    await run.result
    expect(toolResults(run.agent)).to.deep.equal([['shell', 'Error: tool call "shell" was denied: approval is not available to a delegated subagent']])
    expect(s.asked).to.deep.equal([])
    await run.dispose()
  })

  it('still asks for the root agent', async () => {
    const s = await approvalScene({ default: 'ask', children: 'deny' })
    s.tool('shell')
    const { agent: root } = await s.create()
    const result = s.root.tools.execute({ name: 'shell', arguments: {}, agent: root })
    const asked = await s.nextAsked()
    s.root.approvals.decide(asked.id, { approved: true })
    expect((await result).isError).to.equal(false)
  })

  it('gives every agent with a parent the delegation-policy section, order 120, and the root none', async () => {
    const s = await approvalScene({ children: 'deny' })
    const { agent: root } = await s.create()
    s.scripted.push({ text: 'done' })
    const run = await s.root.inprocessRun.spawn(request(root))
    await run.result
    const child = s.root.systemPrompt.assemble(run.agent).sections.find((section) => section.name === 'delegation-policy')
    expect(child).to.deep.equal({ name: 'delegation-policy', order: 120, text: delegationPolicy })
    expect(s.scripted.requests[0]!.system).to.contain(delegationPolicy)
    expect(s.root.systemPrompt.assemble(root).text).not.to.contain('delegated subagent')
    await run.dispose()
  })

  it('adds no delegation-policy section under route', async () => {
    const s = await approvalScene()
    const { agent: root } = await s.create()
    s.scripted.push({ text: 'done' })
    const run = await s.root.inprocessRun.spawn(request(root))
    await run.result
    expect(s.root.systemPrompt.assemble(run.agent).sections.map((section) => section.name)).not.to.include('delegation-policy')
    await run.dispose()
  })
})

describe('Approvals narrowing, never widening (SPEC §11.1)', () => {
  it('asks about a child call its request approval asks about, and records that policy in the child header', async () => {
    const s = await approvalScene()
    s.tool('shell')
    const { agent: root } = await s.create()
    const run = await childCalling(s, root, 'shell', { approval: { default: 'ask' } })
    expect(run.agent.session.header.approval).to.deep.equal({ default: 'ask' })
    const asked = await s.nextAsked()
    s.root.approvals.decide(asked.id, { approved: false })
    await run.result
    expect(toolResults(run.agent)).to.deep.equal([['shell', 'Error: tool call "shell" was denied: denied by the user']])
    // the parent's own calls are not affected
    expect((await s.root.tools.execute({ name: 'shell', arguments: {}, agent: root })).isError).to.equal(false)
    await run.dispose()
  })

  it('keeps a parent deny that a child request approval allows', async () => {
    const s = await approvalScene()
    s.tool('shell')
    const { agent: root } = await s.create({ agentOptions: { approval: { rules: [{ tool: 'shell', decision: 'deny' }] } } })
    const run = await childCalling(s, root, 'shell', { approval: { default: 'allow', rules: [{ tool: 'shell', decision: 'allow' }] } })
    await run.result
    expect(toolResults(run.agent)).to.deep.equal([['shell', 'Error: tool call "shell" was denied: denied by policy']])
    await run.dispose()
  })

  it('keeps a parent ask that the child own agentOptions approval allows', async () => {
    const s = await approvalScene()
    s.tool('shell')
    const { agent: root } = await s.create({ agentOptions: { approval: { default: 'ask' } } })
    const run = await childCalling(s, root, 'shell', { agentOptions: { approval: { default: 'allow' } } })
    const asked = await s.nextAsked()
    expect(asked.agentId).to.equal(run.id)
    s.root.approvals.decide(asked.id, { approved: true })
    await run.result
    await run.dispose()
  })

  it('passes the chain on to a grandchild started with no approval of its own', async () => {
    const s = await approvalScene()
    s.tool('shell')
    const { agent: root } = await s.create()
    s.scripted.push({ text: 'child idle' })
    const child = await s.root.inprocessRun.spawn(request(root, { approval: { rules: [{ tool: 'shell', decision: 'deny' }] } }))
    await child.result
    const grandchild = await childCalling(s, child.agent, 'shell')
    expect(grandchild.agent.session.header.approval).to.deep.equal({ rules: [{ tool: 'shell', decision: 'deny' }] })
    await grandchild.result
    expect(toolResults(grandchild.agent)).to.deep.equal([['shell', 'Error: tool call "shell" was denied: denied by policy']])
    await child.dispose()
  })

  it("merges a definition's baseline approval strictest into the child header", async () => {
    const s = await approvalScene()
    s.tool('shell')
    const { agent: root } = await s.create()
    // what a definitions plugin does in `subagent/define`, before `subagent/prepare`
    s.on('subagent/define', (plan) => plan.setBaseline({ approval: { rules: [{ tool: 'shell', decision: 'deny' }] } }))
    const run = await childCalling(s, root, 'shell', { approval: { default: 'ask', rules: [{ tool: 'shell', decision: 'allow' }] } })
    expect(run.agent.session.header.approval).to.deep.equal({ default: 'ask', rules: [{ tool: 'shell', decision: 'deny' }] })
    await run.result
    expect(toolResults(run.agent)).to.deep.equal([['shell', 'Error: tool call "shell" was denied: denied by policy']])
    await run.dispose()
  })

  it('records no approval in the header of a child started with no policy anywhere', async () => {
    const s = await approvalScene({ default: 'ask' })
    const { agent: root } = await s.create()
    s.scripted.push({ text: 'done' })
    const run = await s.root.inprocessRun.spawn(request(root))
    await run.result
    expect(run.agent.session.header).not.to.have.property('approval')
    await run.dispose()
  })

  it('rejects a child whose agentOptions approval is malformed, creating nothing', async () => {
    const s = await approvalScene()
    const { agent: root } = await s.create()
    const error = await s.root.inprocessRun.spawn(request(root, { agentOptions: { approval: { default: 'sometimes' } as never } })).then(
      () => expect.fail('start fulfilled'),
      (reason: Error) => reason,
    )
    expect(error).to.be.instanceOf(TypeError)
    expect(error.message).to.equal('subagent request agentOptions.approval default must be "allow", "ask" or "deny", not "sometimes"')
    expect(s.root.agents.list()).to.deep.equal([root])
  })

  it('keeps the child guard across agents.resume through its session header', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'approvals-'))
    try {
      const first = await scene({ plugins: [[SessionFiles, { dir }], InProcessRun, [Approvals as Plugin, {}]] })
      const { agent: root } = await first.create()
      first.scripted.push({ text: 'done' })
      const run = await first.root.inprocessRun.spawn(request(root, { approval: { rules: [{ tool: 'shell', decision: 'ask' }] } }))
      await run.result
      const childId = run.id
      await run.dispose()
      await first.root.sessionFiles.flush()
      await first.end()
      // a later process resumes the child alone
      const second = await scene({ plugins: [[SessionFiles, { dir }], [Approvals as Plugin, {}]] })
      second.root.tools.register({ name: 'shell', description: 'Shell.', parameters: { type: 'object' }, execute: () => 'ran' })
      const asked: string[] = []
      second.on('approval/asked', (request) => {
        asked.push(request.tool)
        second.root.approvals.decide(request.id, { approved: false })
      })
      const handle = await second.root.agents.resume(childId, { agentOptions: { provider: 'scripted', model: 'test' } })
      expect(handle.agent.session.header.approval).to.deep.equal({ rules: [{ tool: 'shell', decision: 'ask' }] })
      const result = await second.root.tools.execute({ name: 'shell', arguments: {}, agent: handle.agent })
      expect(asked).to.deep.equal(['shell'])
      expect(result.code).to.equal('DENIED')
      await handle.dispose()
      await second.root.sessionFiles.flush()
      await second.end()
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('never asks about a structured child capture, even when every call is asked', async () => {
    const s = await approvalScene({ default: 'ask' }, [StructuredOutput])
    const { agent: root } = await s.create()
    s.scripted.push({ toolCalls: [{ name: 'structured_output', arguments: '{"answer":42}' }] })
    const run = await s.root.inprocessRun.spawn(
      request(root, { outputSchema: { type: 'object', properties: { answer: { type: 'number' } }, required: ['answer'] } }),
    )
    const result = await run.result
    expect(result.structured).to.deep.equal({ answer: 42 })
    expect(s.asked).to.deep.equal([])
    await run.dispose()
  })
})

describe("Approvals remember: 'tree' (SPEC §11.2)", () => {
  it('gives later calls of the same tool anywhere in the tree the same answer without asking', async () => {
    const s = await approvalScene({ default: 'ask' })
    s.tool('shell')
    const { agent: root } = await s.create()
    const first = s.root.tools.execute({ name: 'shell', arguments: {}, agent: root })
    s.root.approvals.decide((await s.nextAsked()).id, { approved: true, remember: 'tree' })
    expect((await first).isError).to.equal(false)
    expect(eventsOf(root, 'approval/decided')).to.deep.equal([{ requestId: s.asked[0]!.id, approved: true, remember: 'tree', by: 'user' }])
    const run = await childCalling(s, root, 'shell')
    await run.result
    expect(toolResults(run.agent)).to.deep.equal([['shell', 'shell ran']])
    expect(s.asked).to.have.length(1)
    await run.dispose()
  })

  it('remembers a denial for the tree with its reason', async () => {
    const s = await approvalScene({ default: 'ask' })
    s.tool('shell')
    const { agent: root } = await s.create()
    const first = s.root.tools.execute({ name: 'shell', arguments: {}, agent: root })
    s.root.approvals.decide((await s.nextAsked()).id, { approved: false, reason: 'not today', remember: 'tree' })
    await first
    const again = await s.root.tools.execute({ name: 'shell', arguments: {}, agent: root })
    expect(again.content).to.deep.equal([{ type: 'text', text: 'Error: tool call "shell" was denied: not today' }])
    expect(s.asked).to.have.length(1)
  })

  it('answers nothing for another tool or another tree', async () => {
    const s = await approvalScene({ default: 'ask' })
    s.tool('shell')
    s.tool('rm')
    const { agent: root } = await s.create()
    const { agent: other } = await s.create()
    const first = s.root.tools.execute({ name: 'shell', arguments: {}, agent: root })
    s.root.approvals.decide((await s.nextAsked()).id, { approved: true, remember: 'tree' })
    await first
    const rm = s.root.tools.execute({ name: 'rm', arguments: {}, agent: root })
    const elsewhere = s.root.tools.execute({ name: 'shell', arguments: {}, agent: other })
    await s.nextAsked(3)
    expect(s.asked.map((request) => [request.tool, request.agentId])).to.deep.equal([
      ['shell', root.id],
      ['rm', root.id],
      ['shell', other.id],
    ])
    for (const request of s.root.approvals.pending()) s.root.approvals.decide(request.id, { approved: true })
    await Promise.all([rm, elsewhere])
  })

  it('never overrides a deny rule', async () => {
    const s = await approvalScene({ default: 'ask' })
    s.tool('shell')
    const { agent: root } = await s.create()
    const first = s.root.tools.execute({ name: 'shell', arguments: {}, agent: root })
    s.root.approvals.decide((await s.nextAsked()).id, { approved: true, remember: 'tree' })
    await first
    const run = await childCalling(s, root, 'shell', { approval: { rules: [{ tool: 'shell', decision: 'deny' }] } })
    await run.result
    expect(toolResults(run.agent)).to.deep.equal([['shell', 'Error: tool call "shell" was denied: denied by policy']])
    await run.dispose()
  })

  it('decides the tree calls of that tool already waiting, by policy', async () => {
    const s = await approvalScene({ default: 'ask' })
    s.tool('shell', { concurrent: true })
    const { agent: root } = await s.create()
    const calls = [1, 2, 3].map((n) => s.root.tools.execute({ name: 'shell', arguments: { n }, agent: root }))
    const [first, second, third] = [await s.nextAsked(1), await s.nextAsked(2), await s.nextAsked(3)]
    s.root.approvals.decide(first.id, { approved: true, remember: 'tree' })
    await Promise.all(calls)
    expect(s.ran).to.have.length(3)
    expect(s.decided.map(([request, decision]) => [request.id, decision.by])).to.deep.equal([
      [first.id, 'user'],
      [second.id, 'policy'],
      [third.id, 'policy'],
    ])
  })
})
