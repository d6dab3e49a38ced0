import { expect } from 'chai'
import type { ApprovalVerdict } from '../../lib/types.ts'
import { approvalScene, eventsOf, scriptCalls, toolResults } from './fixture.ts'

describe('Approvals asking and deciding (SPEC §11.2)', () => {
  it('appends approval/requested to the asking agent session with the exact payload', async () => {
    const s = await approvalScene({ default: 'ask' })
    s.tool('shell')
    const { agent } = await s.create()
    scriptCalls(s, [['shell', { cmd: 'ls -la' }]])
    agent.followup('go')
    const request = await s.nextAsked()
    expect(eventsOf(agent, 'approval/requested')).to.deep.equal([
      { turn: 1, step: 1, callId: 'call_1', name: 'shell', arguments: { cmd: 'ls -la' }, requestId: request.id },
    ])
    s.root.approvals.decide(request.id, { approved: true })
    await agent.whenIdle()
  })

  it('emits approval/asked with the request: agent, tree, path, depth, tool, args, call id, time', async () => {
    const s = await approvalScene({ default: 'ask' })
    s.tool('shell')
    const { agent } = await s.create()
    scriptCalls(s, [['shell', { cmd: 'ls' }]])
    const before = Date.now()
    agent.followup('go')
    const request = await s.nextAsked()
    expect(request).to.deep.equal({
      id: request.id,
      agentId: agent.id,
      rootId: agent.id,
      path: [agent.id],
      depth: 0,
      tool: 'shell',
      args: { cmd: 'ls' },
      callId: 'call_1',
      createdAt: request.createdAt,
    })
    expect(request.id).to.be.a('string').and.not.equal('')
    expect(request.createdAt).to.be.within(before, Date.now())
    expect(Object.isFrozen(request)).to.equal(true)
    s.root.approvals.decide(request.id, { approved: true })
    await agent.whenIdle()
  })

  it('runs the body once approved, and records and emits the decision', async () => {
    const s = await approvalScene({ default: 'ask' })
    s.tool('shell')
    const { agent } = await s.create()
    scriptCalls(s, [['shell']])
    agent.followup('go')
    const request = await s.nextAsked()
    expect(s.ran).to.deep.equal([])
    s.root.approvals.decide(request.id, { approved: true })
    await agent.whenIdle()
    expect(s.ran).to.deep.equal(['shell'])
    expect(toolResults(agent)).to.deep.equal([['shell', 'shell ran']])
    expect(eventsOf(agent, 'approval/decided')).to.deep.equal([{ requestId: request.id, approved: true, by: 'user' }])
    expect(s.decided).to.deep.equal([[request, { requestId: request.id, approved: true, by: 'user' }]])
  })

  it('refuses a denied call with the default reason denied by the user, and the turn goes on', async () => {
    const s = await approvalScene({ default: 'ask' })
    s.tool('shell')
    const { agent } = await s.create()
    scriptCalls(s, [['shell']], 'ok, not running it')
    agent.followup('go')
    const request = await s.nextAsked()
    s.root.approvals.decide(request.id, { approved: false })
    await agent.whenIdle()
    expect(s.ran).to.deep.equal([])
    expect(toolResults(agent)).to.deep.equal([['shell', 'Error: tool call "shell" was denied: denied by the user']])
    expect(eventsOf(agent, 'approval/decided')).to.deep.equal([{ requestId: request.id, approved: false, reason: 'denied by the user', by: 'user' }])
    expect(s.scripted.requests).to.have.length(2)
  })

  it('refuses a denied call with the reason given, code DENIED', async () => {
    const s = await approvalScene({ default: 'ask' })
    s.tool('shell')
    const { agent } = await s.create()
    const result = s.root.tools.execute({ name: 'shell', arguments: {}, agent })
    const request = await s.nextAsked()
    s.root.approvals.decide(request.id, { approved: false, reason: 'not on production' })
    expect(await result).to.deep.equal({
      isError: true,
      content: [{ type: 'text', text: 'Error: tool call "shell" was denied: not on production' }],
      code: 'DENIED',
    })
  })

  it('rejects a second decision with the pinned error and changes nothing', async () => {
    const s = await approvalScene({ default: 'ask' })
    s.tool('shell')
    const { agent } = await s.create()
    const result = s.root.tools.execute({ name: 'shell', arguments: {}, agent })
    const request = await s.nextAsked()
    s.root.approvals.decide(request.id, { approved: true })
    const events = agent.session.events.length
    expect(() => s.root.approvals.decide(request.id, { approved: false })).to.throw(`approval request "${request.id}" is not pending`)
    expect(agent.session.events.length).to.equal(events)
    expect((await result).isError).to.equal(false)
    expect(s.decided).to.have.length(1)
  })

  it('rejects a decision for an unknown id with the pinned error and code NOT_PENDING', async () => {
    const s = await approvalScene({ default: 'ask' })
    let error: (Error & { code?: string }) | undefined
    try {
      s.root.approvals.decide('no-such-request', { approved: true })
    } catch (caught) {
      error = caught as Error & { code?: string }
    }
    expect(error?.message).to.equal('approval request "no-such-request" is not pending')
    expect(error?.code).to.equal('NOT_PENDING')
  })

  const malformed: [string, unknown, string][] = [
    ['a non-object', 'yes', 'approval decision must be an object with approved, reason and/or remember'],
    ['a non-boolean approved', { approved: 'yes' }, 'approval decision approved must be a boolean'],
    ['a misspelt key', { approved: true, remeber: 'tree' }, 'approval decision has unknown key "remeber" (did you mean "remember"?)'],
    ['a wrong remember word', { approved: true, remember: 'tee' }, 'approval decision remember must be "tree" (did you mean "tree"?)'],
    ['a non-string reason', { approved: false, reason: 5 }, 'approval decision reason must be a string'],
  ]
  for (const [what, answer, message] of malformed) {
    it(`rejects ${what} with a TypeError and leaves the request pending`, async () => {
      const s = await approvalScene({ default: 'ask' })
      s.tool('shell')
      const { agent } = await s.create()
      const result = s.root.tools.execute({ name: 'shell', arguments: {}, agent })
      const request = await s.nextAsked()
      expect(() => s.root.approvals.decide(request.id, answer as never)).to.throw(TypeError, message)
      expect(s.root.approvals.pending()).to.deep.equal([request])
      expect(eventsOf(agent, 'approval/decided')).to.deep.equal([])
      s.root.approvals.decide(request.id, { approved: true })
      expect((await result).isError).to.equal(false)
    })
  }

  it('lets a code answerer decide from its approval/asked listener at once', async () => {
    const s = await approvalScene({ default: 'ask' })
    s.tool('shell')
    s.tool('rm')
    s.on('approval/asked', (request) => s.root.approvals.decide(request.id, request.tool === 'rm' ? { approved: false, reason: 'never rm' } : { approved: true }))
    const { agent } = await s.create()
    scriptCalls(s, [['shell'], ['rm']])
    agent.followup('go')
    await agent.whenIdle()
    expect(toolResults(agent)).to.deep.equal([
      ['shell', 'shell ran'],
      ['rm', 'Error: tool call "rm" was denied: never rm'],
    ])
  })

  it('lets a code answerer decide later', async () => {
    const s = await approvalScene({ default: 'ask' })
    s.tool('shell')
    s.on('approval/asked', (request) => void setImmediate(() => s.root.approvals.decide(request.id, { approved: true })))
    const { agent } = await s.create()
    scriptCalls(s, [['shell']])
    agent.followup('go')
    await agent.whenIdle()
    expect(s.ran).to.deep.equal(['shell'])
  })

  it('contains and logs a listener that throws inside approval/asked, and the request stays pending', async () => {
    const s = await approvalScene({ default: 'ask' })
    s.tool('shell')
    s.on('approval/asked', () => {
      throw new Error('answerer crashed')
    })
    s.on('approval/asked', async () => {
      throw new Error('async answerer crashed')
    })
    const { agent } = await s.create()
    const result = s.root.tools.execute({ name: 'shell', arguments: {}, agent })
    const request = await s.nextAsked()
    await new Promise((resolve) => setImmediate(resolve))
    expect(s.root.approvals.pending()).to.deep.equal([request])
    const logged = s.logged().join('\n')
    expect(logged).to.contain('answerer crashed')
    expect(logged).to.contain('async answerer crashed')
    s.root.approvals.decide(request.id, { approved: true })
    expect((await result).isError).to.equal(false)
  })

  it('decides a waiting call cancelled when its turn is aborted, and the turn ends aborted', async () => {
    const s = await approvalScene({ default: 'ask' })
    s.tool('shell')
    const { agent } = await s.create()
    scriptCalls(s, [['shell']])
    agent.followup('go')
    const request = await s.nextAsked()
    agent.cancel({ kind: 'user' })
    await agent.whenIdle()
    expect(eventsOf(agent, 'approval/decided')).to.deep.equal([{ requestId: request.id, approved: false, reason: 'cancelled', by: 'cancel' }])
    expect(s.ran).to.deep.equal([])
    expect(s.root.approvals.pending()).to.deep.equal([])
    expect(agent.session.events.at(-1)!.data).to.deep.equal({ turn: 1, reason: { kind: 'aborted', cause: { kind: 'user' } } })
    // the model was not asked again after the cancelled call
    expect(s.scripted.requests).to.have.length(1)
  })

  it('decides a call no one answers within timeout as a timeout', async () => {
    const s = await approvalScene({ default: 'ask', timeout: 20 })
    s.tool('shell')
    const { agent } = await s.create()
    const result = await s.root.tools.execute({ name: 'shell', arguments: {}, agent })
    expect(result.content).to.deep.equal([{ type: 'text', text: 'Error: tool call "shell" was denied: no decision within 20 ms' }])
    expect(result.code).to.equal('DENIED')
    const request = s.asked[0]!
    expect(eventsOf(agent, 'approval/decided')).to.deep.equal([
      { requestId: request.id, approved: false, reason: 'no decision within 20 ms', by: 'timeout' },
    ])
  })

  it('lists undecided requests in the order they were asked, of one tree or of all', async () => {
    const s = await approvalScene({ default: 'ask' })
    s.tool('shell')
    const { agent: a } = await s.create()
    const { agent: b } = await s.create()
    const calls = [
      s.root.tools.execute({ name: 'shell', arguments: { n: 1 }, agent: a }),
      s.root.tools.execute({ name: 'shell', arguments: { n: 2 }, agent: b }),
      s.root.tools.execute({ name: 'shell', arguments: { n: 3 }, agent: a }),
    ]
    await s.nextAsked(3)
    expect(s.root.approvals.pending().map((request) => request.args)).to.deep.equal([{ n: 1 }, { n: 2 }, { n: 3 }])
    expect(s.root.approvals.pending(a.id).map((request) => request.args)).to.deep.equal([{ n: 1 }, { n: 3 }])
    expect(s.root.approvals.pending('nobody')).to.deep.equal([])
    expect(() => s.root.approvals.pending(5 as never)).to.throw(TypeError, 'approvals.pending rootId must be a string')
    for (const request of s.root.approvals.pending()) s.root.approvals.decide(request.id, { approved: true })
    await Promise.all(calls)
    expect(s.root.approvals.pending()).to.deep.equal([])
  })

  it('asks about concurrent calls independently, each running once decided', async () => {
    const s = await approvalScene({ default: 'ask' })
    s.tool('fetch', { concurrent: true })
    const { agent } = await s.create()
    scriptCalls(s, [['fetch', { n: 1 }], ['fetch', { n: 2 }], ['fetch', { n: 3 }]])
    agent.followup('go')
    const third = await s.nextAsked(3)
    const [first, second] = s.asked
    s.root.approvals.decide(third.id, { approved: true })
    s.root.approvals.decide(first!.id, { approved: false, reason: 'no' })
    s.root.approvals.decide(second!.id, { approved: true })
    await agent.whenIdle()
    expect(toolResults(agent)).to.deep.equal([
      ['fetch', 'Error: tool call "fetch" was denied: no'],
      ['fetch', 'fetch ran'],
      ['fetch', 'fetch ran'],
    ])
  })

  it('holds back only what §8.1 holds back: a waiting non-concurrent call holds back the later calls', async () => {
    const s = await approvalScene({ rules: [{ tool: 'shell', decision: 'ask' }] })
    s.tool('fetch', { concurrent: true })
    s.tool('shell')
    const { agent } = await s.create()
    scriptCalls(s, [['fetch'], ['fetch'], ['shell'], ['fetch']])
    agent.followup('go')
    const request = await s.nextAsked()
    // the batch before the barrier ran; the call after it waits for the asked call
    expect(s.ran).to.deep.equal(['fetch', 'fetch'])
    s.root.approvals.decide(request.id, { approved: true })
    await agent.whenIdle()
    expect(s.ran).to.deep.equal(['fetch', 'fetch', 'shell', 'fetch'])
  })

  it('lets the siblings of a waiting concurrent call run meanwhile', async () => {
    const s = await approvalScene({ rules: [{ tool: 'slow', decision: 'ask' }] })
    s.tool('fetch', { concurrent: true })
    s.tool('slow', { concurrent: true })
    const { agent } = await s.create()
    scriptCalls(s, [['slow'], ['fetch'], ['fetch']])
    agent.followup('go')
    const request = await s.nextAsked()
    await new Promise((resolve) => setImmediate(resolve))
    expect(s.ran).to.deep.equal(['fetch', 'fetch'])
    s.root.approvals.decide(request.id, { approved: true })
    await agent.whenIdle()
    expect(toolResults(agent).map(([name]) => name)).to.deep.equal(['slow', 'fetch', 'fetch'])
  })

  it('lets inner approve listeners still refuse an approved call', async () => {
    const s = await approvalScene({ default: 'ask' })
    s.tool('shell')
    s.on('tools/approve', (): ApprovalVerdict => ({ kind: 'deny', reason: 'vetoed downstream' }))
    s.on('approval/asked', (request) => s.root.approvals.decide(request.id, { approved: true }))
    const { agent } = await s.create()
    const result = await s.root.tools.execute({ name: 'shell', arguments: {}, agent })
    expect(result.content).to.deep.equal([{ type: 'text', text: 'Error: vetoed downstream' }])
  })

  it('denies an asked call that has no calling agent, as nobody owns it', async () => {
    const s = await approvalScene({ default: 'ask' })
    s.tool('shell')
    const result = await s.root.tools.execute({ name: 'shell', arguments: {} })
    expect(result.content).to.deep.equal([{ type: 'text', text: 'Error: tool call "shell" was denied: approval needs a calling agent' }])
    expect(s.asked).to.deep.equal([])
  })
})
