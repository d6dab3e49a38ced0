import { expect } from 'chai'
import { createDriverHost, unhandledDuring } from '../support/driver.ts'

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
