import { expect } from 'chai'
import type { ContentBlock, StreamPart } from '../../lib/types.ts'
import { createDriverHost, unhandledDuring } from '../support/driver.ts'
import { settles } from '../support/scene.ts'

/** Nests `1` `depth` levels deep in single-element arrays. */
function nested(depth: number): unknown {
  let value: unknown = 1
  for (let i = 0; i < depth; i++) value = [value]
  return value
}

describe('InProcessRun handoff and driving (SPEC §2.3)', () => {
  it('fulfils only after publication', async () => {
    const host = await createDriverHost()
    host.scripted.push({ text: 'ok' })
    const run = await host.root.inprocessRun.spawn(host.request())
    expect(host.root.agents.get(run.id)).to.equal(run.agent)
    expect(host.root.sessions.get(run.id)).to.equal(run.agent.session)
    await run.dispose()
  })

  it('sends the prompt verbatim before start fulfils', async () => {
    const host = await createDriverHost()
    host.scripted.push({ text: 'ok' })
    const prompt = [{ type: 'text' as const, text: '  exact\nprompt  ' }]
    const run = await host.root.inprocessRun.spawn(host.request({ prompt }))
    expect(run.agent.status).to.equal('running')
    const message = run.agent.session.events.find((event) => event.type === 'user/message')
    expect(message?.data).to.deep.equal({ content: prompt, source: { kind: 'user' } })
    await run.dispose()
  })

  it('turns an abort in the gap after publication into a fulfilled run that never sends the prompt', async () => {
    const host = await createDriverHost()
    const controller = new AbortController()
    const off = host.on('agent/created', () => controller.abort())
    const run = await host.root.inprocessRun.spawn(host.request({ signal: controller.signal }))
    off()
    expect(await run.result).to.deep.equal({ output: [], stopReason: 'aborted' })
    expect(run.agent.session.events.some((event) => event.type === 'user/message')).to.equal(false)
    expect(host.scripted.requests).to.have.length(0)
    await run.dispose()
  })

  it('cancels a live run with cause "parent" when the signal aborts', async () => {
    const host = await createDriverHost()
    host.scripted.push('hang')
    const controller = new AbortController()
    const streaming = new Promise<void>((resolve) => {
      const off = host.on('session/event', (_session, event) => {
        if (event.type !== 'assistant/delta') return
        off()
        resolve()
      })
    })
    const run = await host.root.inprocessRun.spawn(host.request({ signal: controller.signal }))
    await streaming
    controller.abort()
    const result = await run.result
    expect(result.stopReason).to.equal('aborted')
    expect(result.output).to.deep.equal([{ type: 'text', text: 'partial' }])
    expect(result.diagnostic).to.equal('the run was cancelled (parent)')
    const end = run.agent.session.events.at(-1)
    expect(end?.data).to.deep.equal({ turn: 1, reason: { kind: 'aborted', cause: { kind: 'parent' } } })
    await run.dispose()
  })

  it('removes its abort listener once the result settles', async () => {
    const host = await createDriverHost()
    host.scripted.push({ text: 'ok' })
    const controller = new AbortController()
    const run = await host.root.inprocessRun.spawn(host.request({ signal: controller.signal }))
    await run.result
    const cancel = run.agent.cancel.bind(run.agent)
    let cancelled = 0
    ;(run.agent as { cancel: typeof cancel }).cancel = (cause) => {
      cancelled++
      cancel(cause)
    }
    controller.abort()
    expect(cancelled).to.equal(0)
    await run.dispose()
  })

  it('owns input others add while it runs', async () => {
    const host = await createDriverHost()
    host.scripted.push({ text: 'first' }, { text: 'second' })
    const run = await host.root.inprocessRun.spawn(host.request())
    run.agent.followup('and also this')
    const result = await run.result
    expect(result.output).to.deep.equal([{ type: 'text', text: 'second' }])
    await run.dispose()
  })

  it('rejects the result with an infrastructure fault while driving', async () => {
    const host = await createDriverHost()
    const off = host.on('subagent/setup', (child) => {
      ;(child as unknown as { followup: () => void }).followup = () => {
        throw new Error('queue is broken')
      }
    })
    const run = await host.root.inprocessRun.spawn(host.request())
    off()
    let error: Error | undefined
    await run.result.catch((e) => (error = e))
    expect(error?.message).to.equal('queue is broken')
    await run.dispose()
  })

  it('never turns an unobserved rejected result into an unhandled rejection', async () => {
    const host = await createDriverHost()
    const seen = await unhandledDuring(async () => {
      const off = host.on('subagent/setup', (child) => {
        ;(child as unknown as { followup: () => void }).followup = () => {
          throw new Error('queue is broken')
        }
      })
      const run = await host.root.inprocessRun.spawn(host.request())
      off()
      await run.dispose()
    })
    expect(seen).to.deep.equal([])
  })

  it('emits subagent/start and subagent/end with the run info', async () => {
    const host = await createDriverHost()
    const seen: unknown[] = []
    host.on('subagent/start', (info) => void seen.push(info))
    host.on('subagent/end', (info) => void seen.push(info))
    host.scripted.push({ text: 'ok', usage: { inputTokens: 5, outputTokens: 2 } })
    const run = await host.root.inprocessRun.spawn(host.request({ label: 'review' }))
    await run.result
    const base = { runId: run.id, parentId: host.parent.id, childId: run.id, rootId: host.parent.id, label: 'review', mode: 'spawn', depth: 1 }
    expect(seen).to.deep.equal([base, { ...base, stopReason: 'completed', usage: { inputTokens: 5, outputTokens: 2 } }])
    await run.dispose()
  })

  it('settles through 20,000 subagent/settle listeners that each return next() without overflowing the stack', async () => {
    const host = await createDriverHost()
    let calls = 0
    const offs: (() => void)[] = []
    for (let i = 0; i < 20_000; i++) {
      offs.push(
        host.on('subagent/settle', (_result, _run, next) => {
          calls++
          return next()
        }),
      )
    }
    host.scripted.push({ text: 'ok' })
    const run = await host.root.inprocessRun.spawn(host.request())
    const result = await run.result
    for (const off of offs) off()
    expect(result).to.deep.equal({ output: [{ type: 'text', text: 'ok' }], stopReason: 'completed' })
    expect(calls).to.equal(20_000)
    await run.dispose()
  })

  it('lets subagent/settle listeners edit the result', async () => {
    const host = await createDriverHost()
    host.on('subagent/settle', async (_result, _run, next) => ({ ...(await next()), diagnostic: 'edited' }))
    host.scripted.push({ text: 'ok' })
    const run = await host.root.inprocessRun.spawn(host.request())
    expect(await run.result).to.deep.equal({ output: [{ type: 'text', text: 'ok' }], stopReason: 'completed', diagnostic: 'edited' })
    await run.dispose()
  })

  it('contains a throwing subagent/end observer', async () => {
    const host = await createDriverHost()
    host.on('subagent/end', () => {
      throw new Error('observer broke')
    })
    host.scripted.push({ text: 'ok' })
    const run = await host.root.inprocessRun.spawn(host.request())
    expect((await run.result).stopReason).to.equal('completed')
    expect(host.logged().some((line) => line.includes('observer broke'))).to.equal(true)
    await run.dispose()
  })
})

describe('InProcessRun observer events', () => {
  it('emits subagent/start before subagent/end for a gap abort', async () => {
    const host = await createDriverHost()
    const seen: string[] = []
    host.on('subagent/start', () => void seen.push('start'))
    host.on('subagent/end', (info) => void seen.push(`end ${info.stopReason}`))
    const controller = new AbortController()
    const off = host.on('agent/created', () => controller.abort())
    const run = await host.root.inprocessRun.spawn(host.request({ signal: controller.signal }))
    off()
    await run.result
    expect(seen).to.deep.equal(['start', 'end aborted'])
    await run.dispose()
  })

  it('ends every started run, with the error when its result rejects', async () => {
    const host = await createDriverHost()
    const ends: unknown[] = []
    host.on('subagent/end', (info) => void ends.push(info))
    host.on('subagent/settle', () => {
      throw new Error('settle broke')
    })
    host.scripted.push({ text: 'ok' })
    const run = await host.root.inprocessRun.spawn(host.request())
    let error: Error | undefined
    await run.result.catch((e) => (error = e))
    expect(error?.message).to.equal('settle broke')
    expect(ends).to.deep.equal([{ runId: run.id, parentId: host.parent.id, childId: run.id, rootId: host.parent.id, mode: 'spawn', depth: 1, error: 'settle broke' }])
    await run.dispose()
  })
})

describe('InProcessRun driving through faulty adapters, tools and listeners (found by the reliability suites)', () => {
  it('ends the turn error when an adapter reports BigInt usage, instead of rejecting run.result', async () => {
    // guards against what happened without it: readResult summed the BigInt and threw, so run.result rejected with a TypeError
    const host = await createDriverHost()
    const request = host.request
    host.root.models.register('odd', {
      async *stream(): AsyncGenerator<StreamPart> {
        yield { type: 'finish', reason: 'stop', usage: { inputTokens: 1n, outputTokens: 1 } as never }
      },
    })
    const run = await host.root.inprocessRun.spawn(request({ agentOptions: { provider: 'odd' } }))
    const result = await settles(run.result, 'run.result')
    expect(result.stopReason).to.equal('error')
    expect(result.diagnostic).to.equal(
      'the child turn failed: model adapter for provider "odd" yielded a malformed part: finish usage must have non-negative finite inputTokens and outputTokens (MODEL_FAILED)',
    )
    await run.dispose()
  })

  it('keeps a non-string text delta out of the session log', async () => {
    // guards against what happened without it: `{type: 'text-delta', text: 42}` was appended as is and the run completed with "42"
    const host = await createDriverHost()
    const request = host.request
    host.scripted.push({ text: 42 as never })
    const run = await host.root.inprocessRun.spawn(request())
    expect((await settles(run.result, 'run.result')).stopReason).to.equal('error')
    expect(run.agent.session.events.some((event) => event.type === 'assistant/delta')).to.equal(false)
    await run.dispose()
  })

  it('awaits an async agent/turn-stop listener instead of treating its promise as a yes', async () => {
    // guards against what happened without it: the pending promise was truthy, so the turn ended completed, and a rejection went unhandled
    const host = await createDriverHost()
    const request = host.request
    host.root.tools.register({ name: 'probe', description: 'Probes.', parameters: { type: 'object' }, execute: () => 'ok' })
    host.on('agent/turn-stop', async () => false)
    host.scripted.push({ toolCalls: [{ name: 'probe', arguments: {} }] }, { text: 'second step ran' })
    const run = await host.root.inprocessRun.spawn(request())
    expect(await settles(run.result, 'run.result')).to.deep.equal({ output: [{ type: 'text', text: 'second step ran' }], stopReason: 'completed' })
    await run.dispose()
  })

  it('fails the step clearly when a system-prompt/assemble listener returns a promise', async () => {
    // guards against what happened without it: its rejection went unhandled and the turn failed with "returned no assembly"
    const host = await createDriverHost()
    const request = host.request
    const broken = async () => {
      throw new Error('async assemble broke')
    }
    host.on('system-prompt/assemble', broken as never)
    const run = await host.root.inprocessRun.spawn(request())
    expect((await settles(run.result, 'run.result')).diagnostic).to.equal(
      'the child turn failed: a system-prompt/assemble listener returned a promise; the hook is synchronous',
    )
    await run.dispose()
  })

  it('contains a session/event listener that throws an unprintable value', async () => {
    // guards against what happened without it: the host's error sink threw while formatting it, so the append threw inside followup and
    // left the child running forever (run.dispose() never settled)
    const host = await createDriverHost()
    const request = host.request
    host.on('session/event', () => {
      throw Object.create(null)
    })
    host.scripted.push({ text: 'ok' })
    const run = await host.root.inprocessRun.spawn(request())
    expect((await settles(run.result, 'run.result')).stopReason).to.equal('completed')
    await settles(run.dispose(), 'run.dispose()')
    expect(host.logged().every((line) => line.endsWith('listener failed: unprintable thrown object'))).to.equal(true)
  })

  it('reports a tool that throws an unprintable value as a tool error', async () => {
    // guards against what happened without it: formatting the error threw, the turn ended error and no tools/result was emitted
    const host = await createDriverHost()
    const request = host.request
    host.root.tools.register({ name: 'odd', description: 'Throws oddly.', parameters: { type: 'object' }, execute: () => {
      throw Object.create(null)
    } })
    const results: unknown[] = []
    host.on('tools/result', (_exec, result) => void results.push(result))
    host.scripted.push({ toolCalls: [{ name: 'odd', arguments: {} }] }, { text: 'after' })
    const run = await host.root.inprocessRun.spawn(request())
    expect((await settles(run.result, 'run.result')).stopReason).to.equal('completed')
    expect(results).to.deep.equal([{ isError: true, content: [{ type: 'text', text: 'Error: unprintable thrown object' }], code: 'TOOL_FAILED' }])
    await run.dispose()
  })

  it('checks a ToolResult-shaped return before it reaches the session log', async () => {
    // guards against what happened without it: `{isError: false, content: [{type: 'text', text: 1n}]}` was recorded as is, so the log
    // (and SessionFiles, and the next model request) could not be serialized
    const host = await createDriverHost()
    const request = host.request
    host.root.tools.register({ name: 'odd', description: 'Returns junk.', parameters: { type: 'object' }, execute: () => ({
      isError: false,
      content: [{ type: 'text', text: 1n }],
    }) })
    host.scripted.push({ toolCalls: [{ name: 'odd', arguments: {} }] }, { text: 'after' })
    const run = await host.root.inprocessRun.spawn(request())
    await settles(run.result, 'run.result')
    expect(() => JSON.stringify(run.agent.session.events)).to.not.throw()
    const recorded = run.agent.session.events.find((event) => event.type === 'tool/result')?.data
    expect(recorded).to.deep.include({ isError: true, content: [{ type: 'text', text: 'Error: tool result content block 0 text must be a string, got bigint' }] })
    await run.dispose()
  })

  it('settles and disposes a run whose prompt block carries a deeply nested extra key', async () => {
    // guards against what happened without it: freezing the nested value overflowed the stack after the turn had started, so the child
    // stayed running forever and run.dispose() never settled
    const host = await createDriverHost()
    const request = host.request
    const prompt = [{ type: 'text', text: 'look', extra: nested(200_000) }] as unknown as ContentBlock[]
    host.scripted.push({ text: 'ok' })
    const run = await host.root.inprocessRun.spawn(request({ prompt }))
    expect((await settles(run.result, 'run.result')).stopReason).to.equal('completed')
    await settles(run.dispose(), 'run.dispose()')
  })

  it('emits no MaxListenersExceededWarning when 30 concurrent runs share one signal', async () => {
    // guards against what happened without it: one abort listener per run (and per creation in its setup window) on the caller's signal
    const host = await createDriverHost()
    const request = host.request
    const warnings: Error[] = []
    const onWarning = (warning: Error) => warnings.push(warning)
    process.on('warning', onWarning)
    const controller = new AbortController()
    for (let i = 0; i < 30; i++) host.scripted.push('hang')
    // started together, so all 30 setup windows (persona) are open at once too
    const runs = await Promise.all(
      Array.from({ length: 30 }, () => host.root.inprocessRun.spawn(request({ signal: controller.signal, persona: 'one of many' }))),
    )
    controller.abort()
    for (const run of runs) expect((await settles(run.result, 'run.result')).stopReason).to.equal('aborted')
    await Promise.all(runs.map((run) => run.dispose()))
    await new Promise<void>((resolve) => setImmediate(resolve))
    process.off('warning', onWarning)
    expect(warnings.map(String)).to.deep.equal([])
  })
})
