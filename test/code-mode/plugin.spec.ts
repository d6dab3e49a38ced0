import { readFileSync } from 'node:fs'
import { expect } from 'chai'
import type { ToolExecution } from '../../lib/types.ts'
import CodeMode, { DEFAULT_MEMORY_BYTES, describeRunCode, MAX_MEMORY_BYTES, liveSandboxWorkers, TOOL_PARAMETERS } from '../../plugins/code-mode/index.ts'
import { MAX_CALLS_IN_FLIGHT } from '../../plugins/code-mode/sandbox-contract.ts'
import { createHost } from '../support/harness.ts'
import { createFixture, textOf } from './fixture.ts'

const defaultDescription = describeRunCode({ timeoutMs: 5000, memoryBytes: DEFAULT_MEMORY_BYTES })

describe('CodeMode plugin', () => {
  describe('the tool', () => {
    it('shows the model run_code with its description and parameter schema', async () => {
      const fixture = await createFixture()
      const { host, agent } = fixture
      host.scripted.push({ text: 'nothing to do' })
      agent.followup('hello')
      await agent.whenIdle()
      const tools = host.scripted.requests[0]!.tools ?? []
      expect(tools.find((tool) => tool.name === 'run_code')).to.deep.equal({
        name: 'run_code',
        description: defaultDescription,
        parameters: TOOL_PARAMETERS,
      })
    })

    it('gives the model the returned value as the tool result of its call', async () => {
      const fixture = await createFixture()
      const { host, agent } = fixture
      const code = 'const r = await tools.search({ q: "cats" }); return { first: r.hits[0], count: r.hits.length }'
      host.scripted.push({ toolCalls: [{ id: 'call_code', name: 'run_code', arguments: JSON.stringify({ code }) }] }, { text: 'done' })
      agent.followup('find cats')
      await agent.whenIdle()
      const toolMessage = host.scripted.requests[1]!.messages.find((message) => message.role === 'tool')
      expect(toolMessage).to.deep.include({ callId: 'call_code', name: 'run_code', isError: false })
      expect(toolMessage?.content).to.deep.equal([{ type: 'text', text: '{"first":"cats-1","count":2}' }])
    })

    it('returns the program value as the result value', async () => {
      const fixture = await createFixture()
      const result = await fixture.runCode('return [1, { a: "b" }]')
      expect(result).to.deep.include({ isError: false, value: [1, { a: 'b' }] })
    })

    it('turns a thrown program error into the error result "Error: <message>", code SANDBOX', async () => {
      const fixture = await createFixture()
      const result = await fixture.runCode('throw new Error("boom")')
      expect(result.isError).to.equal(true)
      expect(result.code).to.equal('SANDBOX')
      expect(textOf(result)).to.equal('Error: boom')
    })

    it('reports a program error of 400,000 characters shaped against the secret redaction whole, without holding the host', async () => {
      const fixture = await createFixture()
      // the host redacts URL credentials in every error text: this shape made that quadratic (≈ 60 s here)
      const result = await fixture.runCode("throw new Error('a.'.repeat(100000) + 'a://' + 'x'.repeat(200000))")
      expect(textOf(result)).to.equal(`Error: ${'a.'.repeat(100_000)}a://${'x'.repeat(200_000)}`)
    })

    it('applies the configured time limit', async () => {
      const fixture = await createFixture({ timeoutMs: 100 })
      const result = await fixture.runCode('while (true) {}')
      expect(textOf(result)).to.equal('Error: run_code timed out after 100 ms')
    })
  })

  describe('bindings', () => {
    it('binds every tool the agent sees except run_code itself', async () => {
      const fixture = await createFixture()
      const { agent } = fixture
      agent.ctx.tools.register({ name: 'mine', description: 'Scoped.', parameters: { type: 'object' }, execute: () => 'mine' })
      agent.ctx.tools.restrict({ deny: ['plain'] })
      const result = await fixture.runCode('return Object.keys(tools).sort()')
      expect(result.value).to.deep.equal(['fail', 'mine', 'search'])
    })

    it('runs each binding call as a nested execution of the same agent under the run_code token', async () => {
      const fixture = await createFixture()
      await fixture.runCode('return await tools.search({ q: "x" })')
      const [nested, outer] = fixture.results
      expect(outer!.exec.name).to.equal('run_code')
      expect(nested!.exec).to.deep.include({ name: 'search', agent: fixture.agent, parent: outer!.exec.token })
      expect(nested!.exec.args).to.deep.equal({ q: 'x' })
      expect(outer!.result.value).to.deep.equal({ hits: ['x-1', 'x-2'] })
    })

    it('resolves a binding with the text of a tool that returns content only', async () => {
      const fixture = await createFixture()
      const result = await fixture.runCode('return await tools.plain({})')
      expect(result.value).to.equal('line one\nline two')
    })

    it('rejects a binding with the message and code of a failed nested call', async () => {
      const fixture = await createFixture()
      const result = await fixture.runCode(
        'const seen = []; for (const call of [() => tools.fail({}), () => tools.search({ q: 1 })]) {' +
          ' try { await call() } catch (e) { seen.push([e.message.split(":")[0], e.code]) } } return seen',
      )
      expect(result.value).to.deep.equal([
        ['the index is offline', 'TOOL_FAILED'],
        ['invalid arguments', 'INVALID_ARGS'],
      ])
    })

    it('fails run_code with the nested error when the program does not catch it', async () => {
      const fixture = await createFixture()
      const result = await fixture.runCode('await tools.fail({})')
      expect(textOf(result)).to.equal('Error: the index is offline')
    })

    it('aborts the program and its nested call when the call signal aborts', async () => {
      const fixture = await createFixture()
      const controller = new AbortController()
      let nestedEnded: Promise<void> | undefined
      fixture.agent.ctx.tools.register({
        name: 'wait',
        description: 'Waits until cancelled.',
        parameters: { type: 'object' },
        execute: (_args: never, exec: ToolExecution) => {
          const ended = new Promise<never>((_resolve, reject) => {
            exec.signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true })
          })
          nestedEnded = ended.then(
            () => undefined,
            () => undefined,
          )
          controller.abort()
          return ended
        },
      })
      const result = await fixture.runCode('await tools.wait({})', controller.signal)
      expect(textOf(result)).to.equal('Error: run_code was aborted')
      await nestedEnded
      // the nested call's own result is emitted after its body settles
      await new Promise((resolve) => setImmediate(resolve))
      const nested = fixture.results.find(({ exec }) => exec.name === 'wait')
      expect(nested && textOf(nested.result)).to.equal('Error: stopped')
    })
  })

  describe('a program that stalls its thread', () => {
    it('keeps the host answering while run_code busy-loops', async () => {
      const fixture = await createFixture({ timeoutMs: 300 })
      let turns = 0
      let isCounting = true
      const tick = (): void => {
        turns++
        if (isCounting) setImmediate(tick)
      }
      // counting starts once the program runs: starting a worker or an interpreter also yields
      fixture.agent.ctx.tools.register({
        name: 'started',
        description: 'Marks the start.',
        parameters: { type: 'object' },
        execute: () => {
          setImmediate(tick)
          return 'ok'
        },
      })
      const result = await fixture.runCode('await tools.started({}); while (true) {}')
      isCounting = false
      expect(textOf(result)).to.equal('Error: run_code timed out after 300 ms')
      // a blocked host thread turns a handful of times around the call; a free one thousands
      expect(turns).to.be.greaterThan(50)
    })

    it('ends a run_code stuck in one builtin call when the call signal aborts', async () => {
      const fixture = await createFixture({ timeoutMs: 60_000 })
      const controller = new AbortController()
      fixture.agent.ctx.tools.register({
        name: 'started',
        description: 'Marks the start.',
        parameters: { type: 'object' },
        execute: () => {
          setImmediate(() => controller.abort())
          return 'ok'
        },
      })
      const result = await fixture.runCode(
        'await tools.started({}); Array.prototype.includes.call({ length: 2 ** 53 - 1 }, 1); return "finished"',
        controller.signal,
      )
      expect(result.code).to.equal('SANDBOX')
      expect(textOf(result)).to.equal('Error: run_code was aborted')
    })
  })

  describe('nested calls the program does not await', () => {
    it('emits their tools/result before the run_code result', async () => {
      const fixture = await createFixture()
      fixture.agent.ctx.tools.register({
        name: 'slow',
        description: 'Takes a few host turns.',
        parameters: { type: 'object' },
        execute: async () => {
          for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve))
          return 'slow done'
        },
      })
      const result = await fixture.runCode('tools.slow({}); return "returned"')
      expect(result.value).to.equal('returned')
      expect(fixture.results.map(({ exec, result }) => [exec.name, result.isError])).to.deep.equal([
        ['slow', false],
        ['run_code', false],
      ])
    })
  })

  describe('lifecycle', () => {
    it('leaves no sandbox worker, timer or listener behind when unloaded', async () => {
      const host = await createHost()
      const baseline = host.snapshot()
      const workers = liveSandboxWorkers()
      const timers = process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length
      const fiber = host.root.plugin(CodeMode)
      await fiber
      const { agent, dispose } = await host.root.agents.create({})
      const result = await host.root.tools.execute({ name: 'run_code', arguments: { code: 'return 1' }, agent })
      expect(result.value).to.equal(1)
      expect(liveSandboxWorkers()).to.be.greaterThan(workers)
      await dispose()
      await fiber.dispose()
      expect(liveSandboxWorkers()).to.equal(workers)
      expect(process.getActiveResourcesInfo().filter((name) => name === 'Timeout')).to.have.length(timers)
      expect(host.snapshot()).to.deep.equal(baseline)
    })

    it('removes run_code when unloaded', async () => {
      const host = await createHost()
      const baseline = host.snapshot()
      const fiber = host.root.plugin(CodeMode)
      await fiber
      expect(host.root.tools.get('run_code')).to.not.equal(undefined)
      await fiber.dispose()
      expect(host.root.tools.get('run_code')).to.equal(undefined)
      expect(host.snapshot()).to.deep.equal(baseline)
    })

    it('registers run_code again with the new limits on a config update', async () => {
      const host = await createHost()
      const fiber = host.root.plugin(CodeMode)
      await fiber
      fiber.update({ timeoutMs: 1500, memoryBytes: 8 * 1024 * 1024 })
      await fiber
      expect(host.root.tools.get('run_code')?.description).to.equal(
        describeRunCode({ timeoutMs: 1500, memoryBytes: 8 * 1024 * 1024 }),
      )
      expect(host.root.tools.get('run_code')?.description).to.include('1.5 seconds').and.include('8 MiB')
      await fiber.dispose()
    })

    // a restart left no run_code while the old workers ended: a model's call met UNKNOWN_TOOL
    it('keeps run_code registered at every turn of the event loop while a config update applies', async () => {
      const host = await createHost()
      const fiber = host.root.plugin(CodeMode)
      await fiber
      let isUpdated = false
      void Promise.resolve(fiber.update({ timeoutMs: 1500, memoryBytes: 8 * 1024 * 1024 })).then(() => (isUpdated = true))
      const missing: number[] = []
      for (let turn = 0; !isUpdated; turn++) {
        if (!host.root.tools.get('run_code')) missing.push(turn)
        await new Promise((resolve) => setImmediate(resolve))
      }
      expect(missing).to.deep.equal([])
      expect(host.root.tools.get('run_code')?.description).to.equal(describeRunCode({ timeoutMs: 1500, memoryBytes: 8 * 1024 * 1024 }))
      await fiber.dispose()
    })

    it('rejects a memoryBytes below 1 MiB in its config', async () => {
      const host = await createHost()
      const fiber = host.root.plugin(CodeMode, { timeoutMs: 5000, memoryBytes: 1024 })
      const error = await fiber.then(
        () => undefined,
        (reason: unknown) => reason,
      )
      expect(error).to.be.an('error')
      expect(host.root.tools.get('run_code')).to.equal(undefined)
    })

    // a timer past 2^31 - 1 ms fires after 1 ms: every program would time out at once
    it('rejects a timeoutMs past 2147483647 ms in its config, naming the field', async () => {
      const host = await createHost()
      const fiber = host.root.plugin(CodeMode, { timeoutMs: 2 ** 31, memoryBytes: 1024 * 1024 })
      const error = await fiber.then(
        () => undefined,
        (reason: unknown) => reason,
      )
      expect(String(error)).to.include('timeoutMs').and.include('2147483647')
      expect(host.root.tools.get('run_code')).to.equal(undefined)
    })

    // a 32-bit interpreter memory cannot hold more: every run would fail to make its instance
    it('rejects a memoryBytes past what a 4 GiB interpreter memory holds in its config, naming the field', async () => {
      const host = await createHost()
      const fiber = host.root.plugin(CodeMode, { timeoutMs: 5000, memoryBytes: 2 ** 32 })
      const error = await fiber.then(
        () => undefined,
        (reason: unknown) => reason,
      )
      expect(String(error)).to.include('memoryBytes').and.include(String(MAX_MEMORY_BYTES))
      expect(host.root.tools.get('run_code')).to.equal(undefined)
    })

    it('rejects a negative maxWaitingArgumentBytes in its config, naming the field', async () => {
      const host = await createHost()
      const fiber = host.root.plugin(CodeMode, { timeoutMs: 5000, memoryBytes: DEFAULT_MEMORY_BYTES, maxWaitingArgumentBytes: -1 })
      const error = await fiber.then(
        () => undefined,
        (reason: unknown) => reason,
      )
      expect(String(error)).to.include('maxWaitingArgumentBytes')
      expect(host.root.tools.get('run_code')).to.equal(undefined)
    })

    it('defaults maxWaitingArgumentBytes to 32 MiB', () => {
      expect(CodeMode.Config({ timeoutMs: 5000, memoryBytes: DEFAULT_MEMORY_BYTES }).maxWaitingArgumentBytes).to.equal(32 * 1024 * 1024)
    })

    it('refuses a program\'s binding call past its configured maxWaitingArgumentBytes', async () => {
      const fixture = await createFixture({ maxWaitingArgumentBytes: 0 })
      const releases: (() => void)[] = []
      let allHeld!: () => void
      const held = new Promise<void>((resolve) => (allHeld = resolve))
      fixture.host.root.tools.register({
        name: 'hold',
        description: 'Waits to be released.',
        parameters: { type: 'object' },
        execute: () =>
          new Promise<string>((resolve) => {
            releases.push(() => resolve('released'))
            if (releases.length === MAX_CALLS_IN_FLIGHT) allHeld()
          }),
      })
      const running = fixture.runCode(`
        const inFlight = Array.from({ length: ${MAX_CALLS_IN_FLIGHT} }, () => tools.hold({}))
        let refused
        try { await tools.search({ q: 'a' }) } catch (error) { refused = error.message }
        await Promise.all(inFlight)
        return refused`)
      await held
      for (const release of releases) release()
      expect(textOf(await running)).to.equal(
        'tool call refused: 32 calls are in flight and the arguments waiting for a place would reach 9 bytes, over the limit of 0; await earlier calls before starting more',
      )
    })

    it('quotes its default description and parameter schema in the README', () => {
      const readme = readFileSync(new URL('../../plugins/code-mode/README.md', import.meta.url), 'utf8')
      expect(readme).to.include(`> ${defaultDescription}\n`)
      const schema = /Parameters \(`TOOL_PARAMETERS`\):\n```json\n([\s\S]*?)\n```/.exec(readme)?.[1]
      expect(JSON.parse(schema ?? 'null')).to.deep.equal(TOOL_PARAMETERS)
    })
  })
})

describe('CodeMode in zh-CN', () => {
  it('shows the model the run_code description and parameter in Chinese', async () => {
    const host = await createHost()
    const fiber = host.root.plugin(CodeMode, { timeoutMs: 5000, memoryBytes: DEFAULT_MEMORY_BYTES, locale: 'zh-CN' })
    await fiber
    const schema = host.root.tools.get('run_code')
    expect(schema?.description).to.include('在沙箱中运行').and.include('5 秒')
    const properties = schema?.parameters.properties as { code: { description: string } } | undefined
    expect(properties?.code.description).to.match(/^一个异步/)
    await fiber.dispose()
  })
})
