/**
 * Concurrent tool calls meeting the driver plugins (SPEC §8.1): `subagent` calls of one step run
 * side by side, `structured_output` and `run_code` stay barriers, and the structured-output guard
 * and commit hold per call.
 */
import { expect } from 'chai'
import type { Agent, ModelRequest, SessionEventData, StreamPart } from '../../lib/types.ts'
import CodeMode from '../../plugins/code-mode/index.ts'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import StructuredOutput, { alreadyRecorded } from '../../plugins/structured-output/index.ts'
import SubagentTool from '../../plugins/subagent-tool/index.ts'
import { CANCELLED_HEADING } from '../../plugins/subagent-tool/outcome.ts'
import type { Invariants } from '../support/invariants.ts'
import { type Scene, scene } from '../support/scene.ts'
import { drain, gatedTool } from './gated-tool.ts'

type ToolResultEvent = SessionEventData['tool/result']

function recorded(agent: Agent): ToolResultEvent[] {
  return agent.session.events.filter((event) => event.type === 'tool/result').map((event) => event.data as ToolResultEvent)
}

function textOf(event: ToolResultEvent): string {
  return event.content.map((block) => (block.type === 'text' ? block.text : '')).join('')
}

interface FanOut {
  host: Scene
  invariants: Invariants
  parent: Agent
  disposeParent(): Promise<void>
  /** Child model requests waiting at their gate, by prompt. */
  readonly waiting: Map<string, () => void>
  /** Resolves once `count` child model requests are waiting at once. */
  whenWaiting(count: number): Promise<void>
  /** Disposes the parent, checks the invariants and the leak baseline. */
  close(): Promise<void>
}

function promptOf(request: ModelRequest): string {
  const first = request.messages[0]
  return first?.role === 'user' && first.content[0]?.type === 'text' ? first.content[0].text : ''
}

/**
 * A parent whose model asks for one `subagent` call per prompt in one step, then answers `parent
 * done`; each child's model waits at a gate (or for its signal) and then answers `answer to <prompt>`.
 */
async function fanOut(prompts: string[]): Promise<FanOut> {
  const host = await scene({ plugins: [InProcessRun, [SubagentTool, {} as SubagentTool.Config]] })
  const { root, invariants } = host
  const waiting = new Map<string, () => void>()
  const waiters: { count: number; resolve: () => void }[] = []
  let parentId = ''
  const unregister = root.models.register('fan', {
    async *stream(request: ModelRequest): AsyncGenerator<StreamPart> {
      if (request.agent.id === parentId) {
        if (request.messages.at(-1)?.role === 'tool') {
          yield { type: 'text-delta', text: 'parent done' }
        } else {
          for (const [index, prompt] of prompts.entries()) {
            yield { type: 'tool-call', id: `call_${index + 1}`, name: 'subagent', arguments: JSON.stringify({ prompt }) }
          }
        }
        yield { type: 'finish', reason: 'stop' }
        return
      }
      const prompt = promptOf(request)
      await new Promise<void>((resolve, reject) => {
        const { signal } = request
        signal.addEventListener('abort', () => reject(signal.reason), { once: true })
        waiting.set(prompt, resolve)
        for (const waiter of waiters.filter((w) => waiting.size >= w.count)) {
          waiters.splice(waiters.indexOf(waiter), 1)
          waiter.resolve()
        }
      })
      waiting.delete(prompt)
      yield { type: 'text-delta', text: `answer to ${prompt}` }
      yield { type: 'finish', reason: 'stop' }
    },
  })
  const baseline = host.snapshot()
  const handle = await root.agents.create({ agentOptions: { provider: 'fan', model: 'fan-1' } })
  parentId = handle.agent.id
  return {
    host,
    invariants,
    parent: handle.agent,
    disposeParent: () => handle.dispose(),
    waiting,
    whenWaiting(count) {
      if (waiting.size >= count) return Promise.resolve()
      return new Promise<void>((resolve) => waiters.push({ count, resolve }))
    },
    async close() {
      await handle.dispose()
      invariants.check()
      expect(host.snapshot()).to.deep.equal(baseline)
      unregister()
    },
  }
}

describe('concurrent tool calls with the driver plugins (SPEC §8.1)', () => {
  it('declares subagent concurrent, structured_output and run_code not', async () => {
    const host = await scene({
      plugins: [InProcessRun, StructuredOutput, [SubagentTool, {} as SubagentTool.Config], [CodeMode, {} as CodeMode.Config]],
    })
    const { root } = host
    const { agent: parent } = await root.agents.create({ agentOptions: { provider: 'scripted', model: 'test' } })
    root.scripted.push('hang')
    const run = await root.inprocessRun.spawn({
      parent,
      prompt: 'answer',
      signal: new AbortController().signal,
      outputSchema: { type: 'object', properties: { answer: { type: 'integer' } } },
    })
    expect(root.tools.isConcurrent('subagent', parent)).to.equal(true)
    expect(root.tools.isConcurrent('run_code', parent)).to.equal(false)
    expect(root.tools.isConcurrent('structured_output', run.agent)).to.equal(false)
    await run.dispose()
    await root.agents.disposeAll()
  })

  it('runs the subagent calls of one step side by side and returns their results in model order', async () => {
    const fan = await fanOut(['first', 'second', 'third'])
    fan.parent.followup('fan out')
    // three children are waiting for their model at once: none was let go yet
    await fan.whenWaiting(3)
    expect(fan.host.root.agents.list()).to.have.length(4)
    for (const prompt of ['third', 'second', 'first']) fan.waiting.get(prompt)!()
    await fan.parent.whenIdle()
    expect(recorded(fan.parent).map((event) => [event.callId, textOf(event)])).to.deep.equal([
      ['call_1', 'answer to first'],
      ['call_2', 'answer to second'],
      ['call_3', 'answer to third'],
    ])
    expect(fan.host.root.agents.list()).to.have.length(1)
    await fan.close()
  })

  it('cancels and disposes every running child when the parent is disposed mid-batch', async () => {
    const fan = await fanOut(['first', 'second', 'third'])
    fan.parent.followup('fan out')
    await fan.whenWaiting(3)
    fan.waiting.get('second')!()
    await fan.disposeParent()
    expect(fan.host.root.agents.list()).to.deep.equal([])
    expect(fan.host.root.sessions.list()).to.deep.equal([])
    const results = recorded(fan.parent)
    expect(results.map((event) => event.callId)).to.deep.equal(['call_1', 'call_2', 'call_3'])
    const headings = results.map((event) => textOf(event).split('\n')[0])
    expect([headings[0], headings[2]]).to.deep.equal([`Error: ${CANCELLED_HEADING}`, `Error: ${CANCELLED_HEADING}`])
    // the released child races the disposal: it may have finished or been cancelled
    expect([`Error: ${CANCELLED_HEADING}`, 'answer to second']).to.include(headings[1])
    expect(fan.parent.session.events.at(-1)?.data).to.deep.equal({ turn: 1, reason: { kind: 'aborted', cause: { kind: 'disposed' } } })
    await fan.close()
  })

  it('holds structured_output until a concurrent batch finished, then denies every later call', async () => {
    const host = await scene({ plugins: [InProcessRun, StructuredOutput] })
    const { root, invariants } = host
    const gated = gatedTool({ concurrent: true })
    root.tools.register(gated.definition)
    const baseline = host.snapshot()
    const handle = await root.agents.create({ agentOptions: { provider: 'scripted', model: 'test' } })
    const capture = { id: 'capture', name: 'structured_output', arguments: '{"answer":7}' }
    const gatedCall = (id: string) => ({ id, name: 'gated', arguments: '{}' })
    root.scripted.push({ toolCalls: [gatedCall('c1'), gatedCall('c2'), capture, gatedCall('c3'), gatedCall('c4')] })
    const run = await root.inprocessRun.spawn({
      parent: handle.agent,
      prompt: 'answer',
      signal: new AbortController().signal,
      outputSchema: { type: 'object', properties: { answer: { type: 'integer' } }, required: ['answer'] },
    })
    await gated.whenStarted(2)
    await drain()
    expect(recorded(run.agent), 'structured_output waits for the batch before it').to.deep.equal([])
    gated.release('c2')
    gated.release('c1')
    const result = await run.result
    expect(gated.started).to.deep.equal(['c1', 'c2'])
    expect(result.stopReason).to.equal('completed')
    expect(result.structured).to.deep.equal({ answer: 7 })
    expect(recorded(run.agent).map((event) => [event.callId, textOf(event)])).to.deep.equal([
      ['c1', 'c1 done'],
      ['c2', 'c2 done'],
      ['capture', 'Structured output recorded.'],
      ['c3', `Error: ${alreadyRecorded('gated')}`],
      ['c4', `Error: ${alreadyRecorded('gated')}`],
    ])
    expect(root.scripted.requests).to.have.length(1)
    await run.dispose()
    await handle.dispose()
    invariants.check()
    expect(host.snapshot()).to.deep.equal(baseline)
  })
})
