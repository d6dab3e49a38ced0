import { expect } from 'chai'
import type { SubagentInfo } from '../../lib/types.ts'
import { createFixture, delegate, textOf } from './fixture.ts'

describe('subagent tool: completed runs', () => {
  it('returns the spawned child\'s answer as the tool result the parent model sees', async () => {
    const fixture = await createFixture()
    const { result } = await delegate(fixture, { prompt: 'count the files' }, { text: 'there are 3 files' })
    expect(result).to.deep.equal({ isError: false, content: [{ type: 'text', text: 'there are 3 files' }] })
    const events = fixture.parent.session.events.filter((event) => event.type === 'tool/result')
    expect(events.map((event) => event.data)).to.deep.equal([
      { turn: 1, step: 1, callId: 'call_sub', name: 'subagent', isError: false, content: [{ type: 'text', text: 'there are 3 files' }] },
    ])
    const next = fixture.host.scripted.requests.at(-1)!
    expect(next.agent).to.equal(fixture.parent)
    expect(next.messages.at(-1)).to.deep.equal({
      role: 'tool',
      callId: 'call_sub',
      name: 'subagent',
      isError: false,
      content: [{ type: 'text', text: 'there are 3 files' }],
    })
  })

  it('sends a spawned child only the prompt', async () => {
    const fixture = await createFixture()
    fixture.host.scripted.push({ text: 'earlier answer' })
    fixture.parent.followup('earlier question')
    await fixture.parent.whenIdle()
    await delegate(fixture, { prompt: 'count the files', mode: 'spawn' }, { text: 'three' })
    const childRequest = fixture.host.scripted.requests[2]!
    expect(childRequest.agent).to.not.equal(fixture.parent)
    expect(childRequest.messages).to.deep.equal([{ role: 'user', content: [{ type: 'text', text: 'count the files' }] }])
  })

  it('passes the parent\'s completed turns to a forked child before the prompt', async () => {
    const fixture = await createFixture()
    fixture.host.scripted.push({ text: 'noted: 7' })
    fixture.parent.followup('remember the number 7')
    await fixture.parent.whenIdle()
    const { result } = await delegate(fixture, { prompt: 'which number?', mode: 'fork' }, { text: '7' })
    expect(textOf(result)).to.equal('7')
    const childRequest = fixture.host.scripted.requests[2]!
    expect(childRequest.messages).to.deep.equal([
      { role: 'user', content: [{ type: 'text', text: 'remember the number 7' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'noted: 7' }] },
      { role: 'user', content: [{ type: 'text', text: 'which number?' }] },
    ])
  })

  it('disposes the child before the tool returns', async () => {
    const fixture = await createFixture()
    let childId: string | undefined
    const off = fixture.host.root.on('subagent/start', (info: SubagentInfo) => {
      childId = info.childId
    })
    const { agentsAtResult } = await delegate(fixture, { prompt: 'task' }, { text: 'done' })
    off()
    expect(childId).to.be.a('string')
    expect(agentsAtResult).to.deep.equal([fixture.parent.id])
    expect(fixture.host.root.sessions.get(childId!)).to.equal(undefined)
  })

  it('passes the label to the run', async () => {
    const fixture = await createFixture()
    const labels: (string | undefined)[] = []
    const off = fixture.host.root.on('subagent/start', (info: SubagentInfo) => {
      labels.push(info.label)
    })
    await delegate(fixture, { prompt: 'task', label: 'file census' }, { text: 'done' })
    off()
    expect(labels).to.deep.equal(['file census'])
  })

  it('gives the child the requested persona as its system prompt', async () => {
    const fixture = await createFixture()
    await delegate(fixture, { prompt: 'task', persona: 'You are a terse auditor.' }, { text: 'done' })
    expect(fixture.host.scripted.requests[1]!.system).to.equal('You are a terse auditor.')
  })

  it('hides denied tools from the child', async () => {
    const fixture = await createFixture()
    await delegate(fixture, { prompt: 'task', tools: { deny: ['subagent'] } }, { text: 'done' })
    const [parentRequest, childRequest] = fixture.host.scripted.requests
    expect(parentRequest!.tools?.map((tool) => tool.name)).to.deep.equal(['subagent'])
    expect(childRequest!).to.not.have.property('tools')
  })

  it('returns only the text blocks of the child\'s last message', async () => {
    const fixture = await createFixture()
    const { result } = await delegate(
      fixture,
      { prompt: 'task' },
      { text: 'let me look', toolCalls: [{ name: 'missing', arguments: {} }] },
      { text: 'final answer' },
    )
    expect(textOf(result)).to.equal('final answer')
  })
})

describe('subagent tool: structured output', () => {
  it('returns the committed value as JSON text and as the result value', async () => {
    const fixture = await createFixture({ structuredOutput: true })
    const schema = { type: 'object', properties: { answer: { type: 'integer' } }, required: ['answer'] }
    const { result } = await delegate(
      fixture,
      { prompt: 'compute', output_schema: schema },
      { toolCalls: [{ name: 'structured_output', arguments: { answer: 42 } }] },
    )
    expect(result).to.deep.equal({ isError: false, content: [{ type: 'text', text: '{"answer":42}' }], value: { answer: 42 } })
  })
})

describe('subagent tool: nested delegation', () => {
  it('lets a child delegate in turn, within the depth cap', async () => {
    const fixture = await createFixture({ depthPolicy: { maxDepth: 2 } })
    const { result } = await delegate(
      fixture,
      { prompt: 'ask your own helper' },
      { toolCalls: [{ name: 'subagent', arguments: { prompt: 'say hi' } }] },
      { text: 'hi from the grandchild' },
      { text: 'my helper said: hi from the grandchild' },
    )
    expect(textOf(result)).to.equal('my helper said: hi from the grandchild')
    const grandchildRequest = fixture.host.scripted.requests[2]!
    expect(grandchildRequest.agent.session.header.delegationDepth).to.equal(2)
  })

  it('hides the tool from a child at the cap, so its call is an unknown tool (SPEC §9)', async () => {
    const fixture = await createFixture({ depthPolicy: { maxDepth: 1 } })
    await delegate(
      fixture,
      { prompt: 'ask your own helper' },
      { toolCalls: [{ id: 'call_nested', name: 'subagent', arguments: { prompt: 'say hi' } }] },
      { text: 'my helper was unavailable' },
    )
    const childRetry = fixture.host.scripted.requests[2]!
    expect(childRetry.messages.at(-1)).to.deep.equal({
      role: 'tool',
      callId: 'call_nested',
      name: 'subagent',
      isError: true,
      content: [{ type: 'text', text: 'Error: unknown tool "subagent"' }],
    })
    expect(fixture.host.scripted.requests[1]!.tools?.map((tool) => tool.name) ?? []).not.to.include('subagent')
  })
})
