import { expect } from 'chai'
import { SubagentDepthError } from '../../lib/errors.ts'
import DepthPolicy from '../../plugins/depth-policy/index.ts'
import { createDriverHost } from '../support/driver.ts'
import { rejectionOf, settles } from '../support/scene.ts'

describe('InProcessRun entry checks (SPEC §2.1)', () => {
  for (const bad of [-1, 1.5, Number.NaN, -0, 2 ** 53, '1', null]) {
    const label = Object.is(bad, -0) ? '-0' : typeof bad === 'string' ? `"${bad}"` : String(bad)
    it(`rejects maxDepth ${label} with a TypeError`, async () => {
      const host = await createDriverHost()
      const error = await rejectionOf(host.root.inprocessRun.spawn(host.request({ maxDepth: bad as number })))
      expect(error).to.be.instanceOf(TypeError)
      expect(error.message).to.equal('subagent maxDepth must be a non-negative safe integer')
    })
  }

  it('rejects a request without a signal with a TypeError', async () => {
    const host = await createDriverHost()
    const request = host.request()
    delete (request as { signal?: AbortSignal }).signal
    const error = await rejectionOf(host.root.inprocessRun.spawn(request))
    expect(error).to.be.instanceOf(TypeError)
  })

  it('rejects an aborted signal before creating anything or emitting any event', async () => {
    const host = await createDriverHost()
    const base = host.snapshot()
    const seen: string[] = []
    for (const name of ['agent/created', 'subagent/prepare', 'subagent/start'] as const) {
      host.on(name, () => void seen.push(name))
    }
    const controller = new AbortController()
    controller.abort()
    const error = await rejectionOf(host.root.inprocessRun.spawn(host.request({ signal: controller.signal })))
    expect(error.message).to.equal('subagent request was aborted before child publication')
    expect(seen).to.deep.equal([])
    expect(host.snapshot().agents).to.equal(base.agents)
    expect(host.scripted.requests).to.have.length(0)
  })

  it('checks maxDepth before the signal', async () => {
    const host = await createDriverHost()
    const controller = new AbortController()
    controller.abort()
    const error = await rejectionOf(host.root.inprocessRun.spawn(host.request({ signal: controller.signal, maxDepth: -1 })))
    expect(error.message).to.equal('subagent maxDepth must be a non-negative safe integer')
  })

  for (const bad of [Number.NaN, 1.5, -1, -0, 2 ** 53]) {
    it(`rejects a parent whose runtime subagentDepth is ${Object.is(bad, -0) ? '-0' : String(bad)}`, async () => {
      const host = await createDriverHost({ subagentDepth: bad })
      const error = await rejectionOf(host.root.inprocessRun.spawn(host.request()))
      expect(error).to.be.instanceOf(TypeError)
      expect(error.message).to.equal('agent subagentDepth must be a non-negative safe integer')
    })
  }

  it('lets runtime options deepen the count but never lower the header depth', async () => {
    const host = await createDriverHost()
    const deep = await host.create({ header: { delegationDepth: 2 }, agentOptions: { subagentDepth: 0 } })
    const error = await rejectionOf(host.root.inprocessRun.spawn(host.request({ parent: deep.agent, maxDepth: 2 })))
    expect(error).to.be.instanceOf(SubagentDepthError)
    expect(error.message).to.equal('subagent depth 3 exceeds maxDepth 2')
    const deeper = await host.agent({ subagentDepth: 4 })
    const second = await rejectionOf(host.root.inprocessRun.spawn(host.request({ parent: deeper, maxDepth: 4 })))
    expect(second.message).to.equal('subagent depth 5 exceeds maxDepth 4')
  })

  it('rejects a child depth beyond the safe-integer range with a RangeError', async () => {
    const host = await createDriverHost({ subagentDepth: Number.MAX_SAFE_INTEGER })
    const error = await rejectionOf(host.root.inprocessRun.spawn(host.request()))
    expect(error).to.be.instanceOf(RangeError)
    expect(error.message).to.equal('subagent child depth exceeds the safe-integer range')
  })

  it('reports the attempted depth and cap on SubagentDepthError', async () => {
    const host = await createDriverHost({ subagentDepth: 1 })
    const error = (await rejectionOf(host.root.inprocessRun.spawn(host.request({ maxDepth: 1 })))) as SubagentDepthError
    expect(error.name).to.equal('SubagentDepthError')
    expect(error.attemptedDepth).to.equal(2)
    expect(error.maxDepth).to.equal(1)
    expect(error.message).to.equal('subagent depth 2 exceeds maxDepth 1')
  })

  it('forbids any child with maxDepth 0', async () => {
    const host = await createDriverHost()
    const error = await rejectionOf(host.root.inprocessRun.spawn(host.request({ maxDepth: 0 })))
    expect(error.message).to.equal('subagent depth 1 exceeds maxDepth 0')
  })

  it('allows a child exactly at the cap', async () => {
    const host = await createDriverHost({ subagentDepth: 1 })
    host.scripted.push({ text: 'ok' })
    const run = await host.root.inprocessRun.spawn(host.request({ maxDepth: 2 }))
    expect((await run.result).stopReason).to.equal('completed')
    await run.dispose()
  })

  it('uses the smaller of the request cap and the DepthPolicy cap', async () => {
    const host = await createDriverHost()
    await host.load(DepthPolicy, { maxDepth: 1 })
    const grand = await host.agent({ subagentDepth: 1 })
    const byPolicy = await rejectionOf(host.root.inprocessRun.spawn(host.request({ parent: grand, maxDepth: 5 })))
    expect(byPolicy.message).to.equal('subagent depth 2 exceeds maxDepth 1')
    const byRequest = await rejectionOf(host.root.inprocessRun.spawn(host.request({ maxDepth: 0 })))
    expect(byRequest.message).to.equal('subagent depth 1 exceeds maxDepth 0')
  })

  it('rejects an outputSchema when no loaded plugin serves it', async () => {
    const host = await createDriverHost()
    const base = host.snapshot()
    const error = await rejectionOf(
      host.root.inprocessRun.spawn(host.request({ outputSchema: { type: 'object', properties: {} } })),
    )
    expect(error.message).to.equal('subagent runtime does not support the "outputSchema" capability')
    expect(host.snapshot()).to.deep.equal(base)
  })

  it('checks depth before capabilities', async () => {
    const host = await createDriverHost()
    const error = await rejectionOf(
      host.root.inprocessRun.spawn(host.request({ maxDepth: 0, outputSchema: { type: 'object' } })),
    )
    expect(error).to.be.instanceOf(SubagentDepthError)
  })

  it('does not touch the parent context during the checks', async () => {
    const host = await createDriverHost()
    const fibers = host.snapshot().fibers
    await rejectionOf(host.root.inprocessRun.spawn(host.request({ maxDepth: 0 })))
    host.scripted.push({ text: 'ok' })
    const run = await host.root.inprocessRun.spawn(host.request())
    await run.result
    expect(host.snapshot().fibers).to.equal(fibers)
    await run.dispose()
  })

  it('rejects the start when a subagent/prepare listener throws, leaving nothing behind', async () => {
    const host = await createDriverHost()
    const base = host.snapshot()
    const dispose = host.on('subagent/prepare', () => {
      throw new Error('policy says no')
    })
    const error = await rejectionOf(host.root.inprocessRun.spawn(host.request()))
    expect(error.message).to.equal('policy says no')
    dispose()
    expect(host.snapshot()).to.deep.equal(base)
  })
})

describe('InProcessRun request shape', () => {
  const cases: [string, Record<string, unknown>, string][] = [
    ['a parent that is not an agent', { parent: {} }, 'subagent request parent must be an agent'],
    ['a prompt that is neither text nor blocks', { prompt: 42 }, 'subagent request prompt must be a string or an array of content blocks'],
    ['a non-string persona', { persona: 7 }, 'subagent request persona must be a string'],
    ['a non-string label', { label: {} }, 'subagent request label must be a string'],
    ['a non-string callId', { callId: 12 }, 'subagent request callId must be a string'],
    ['agentOptions that are not an object', { agentOptions: 'fast' }, 'subagent request agentOptions must be an object'],
    ['a tool filter that is not an object', { toolFilter: ['read'] }, 'subagent request toolFilter must be an object'],
    ['a tool filter with non-string names', { toolFilter: { deny: [1] } }, 'subagent request toolFilter.deny must be an array of tool names'],
    ['an inheritRestrictions that is not a boolean', { inheritRestrictions: 'yes' }, 'subagent request inheritRestrictions must be a boolean'],
  ]
  for (const [what, field, message] of cases) {
    it(`rejects ${what} before creating anything`, async () => {
      const host = await createDriverHost()
      const base = host.snapshot()
      const error = await rejectionOf(host.root.inprocessRun.spawn({ ...host.request(), ...field } as never))
      expect(error).to.be.instanceOf(TypeError)
      expect(error.message).to.equal(message)
      expect(host.snapshot()).to.deep.equal(base)
    })
  }
})

describe('InProcessRun entry: prepare listeners and prompt blocks (found by the reliability suites)', () => {
  it('logs the rejection of an async subagent/prepare listener instead of leaving it unhandled', async () => {
    const host = await createDriverHost()
    const request = host.request
    host.on('subagent/prepare', async () => {
      throw new Error('async policy broke')
    })
    host.scripted.push({ text: 'ok' })
    const run = await host.root.inprocessRun.spawn(request())
    expect((await settles(run.result, 'run.result')).stopReason).to.equal('completed')
    expect(host.logged()).to.deep.equal(['a "subagent/prepare" listener failed: async policy broke'])
    await run.dispose()
  })

  it('rejects a prompt block with a non-string text at entry', async () => {
    // guards against what happened without it: accepted, and recorded in the session log as a number
    const host = await createDriverHost()
    const request = host.request
    const error = await rejectionOf(host.root.inprocessRun.spawn(request({ prompt: [{ type: 'text', text: 5 }] as never })))
    expect(error.message).to.equal('subagent request prompt block 0 text must be a string, got number')
  })

  it('drives the run with the signal it checked when a getter answers differently on later reads', async () => {
    // guards against what happened without it: the creation and the handoff read the field again; a later answer that is no signal
    // rejected the start, and after publication left the child live with no run to dispose it
    const host = await createDriverHost()
    const checked = new AbortController()
    let reads = 0
    const request = Object.defineProperty(host.request(), 'signal', {
      enumerable: true,
      get: () => (reads++ === 0 ? checked.signal : ({} as AbortSignal)),
    })
    host.scripted.push('hang')
    const run = await host.root.inprocessRun.spawn(request)
    checked.abort()
    expect((await settles(run.result, 'run.result')).stopReason).to.equal('aborted')
    expect(reads).to.equal(1)
    await run.dispose()
  })
})
