import { expect } from 'chai'
import { MAX_CALLS_IN_FLIGHT, MAX_MEMORY_BYTES, sandboxMessages } from '../../plugins/code-mode/sandbox-contract.ts'
import { runSandboxed, type SandboxBinding } from '../../plugins/code-mode/sandbox.ts'
import '../support/unhandled.ts'

const MiB = 1024 * 1024

/** A binding call the test settles by hand. */
interface HeldCall {
  args: unknown
  signal: AbortSignal
  resolve(value: unknown): void
  reject(error: unknown): void
}

/** A binding whose calls wait until the test settles them or their signal aborts; `calls` records each. */
function heldBinding(): { binding: SandboxBinding; calls: HeldCall[] } {
  const calls: HeldCall[] = []
  const binding: SandboxBinding = (args, signal) =>
    new Promise((resolve, reject) => {
      // a settled call leaves no listener on the run's signal, as a well-behaved tool does (the
      // signal warns past MAX_CALLS_IN_FLIGHT listeners)
      const onAbort = () => reject(new Error('call aborted'))
      const settle = <T>(then: (value: T) => void) => (value: T) => {
        signal.removeEventListener('abort', onAbort)
        then(value)
      }
      calls.push({ args, signal, resolve: settle(resolve), reject: settle(reject) })
      signal.addEventListener('abort', onAbort, { once: true })
    })
  return { binding, calls }
}

/** Counts event-loop turns until stopped: a thread blocked by a program would count none. */
function countTicks(): { stop(): number } {
  let ticks = 0
  let isCounting = true
  const tick = (): void => {
    ticks++
    if (isCounting) setImmediate(tick)
  }
  setImmediate(tick)
  return {
    stop() {
      isCounting = false
      return ticks
    },
  }
}

const echo: SandboxBinding = async (args) => args

describe('runSandboxed', () => {
  describe('results', () => {
    it('returns a JSON copy of the value the program returns', async () => {
      const outcome = await runSandboxed({ code: 'return { a: [1, "x", null, true], d: new Date(0) }', bindings: {} })
      expect(outcome).to.deep.equal({ ok: true, value: { a: [1, 'x', null, true], d: '1970-01-01T00:00:00.000Z' } })
    })

    it('returns undefined when the program returns nothing', async () => {
      expect(await runSandboxed({ code: 'const x = 1', bindings: {} })).to.deep.equal({ ok: true, value: undefined })
    })

    it('fails a run that returns a function with "run_code result is not JSON: cannot serialize a function"', async () => {
      const outcome = await runSandboxed({ code: 'return () => 1', bindings: {} })
      expect(outcome).to.deep.equal({ ok: false, error: 'run_code result is not JSON: cannot serialize a function' })
    })

    it('fails a run that returns a circular structure with the serializer\'s reason', async () => {
      const outcome = await runSandboxed({ code: 'const o = {}; o.self = o; return o', bindings: {} })
      expect(outcome).to.deep.equal({ ok: false, error: 'run_code result is not JSON: circular reference' })
    })
  })

  describe('bindings', () => {
    it('resolves an awaited binding call with a JSON copy of the host result', async () => {
      const seen: unknown[] = []
      const search: SandboxBinding = async (args) => {
        seen.push(args)
        return { hits: ['a', 'b'], at: new Date(0) }
      }
      const outcome = await runSandboxed({
        code: 'const r = await tools.search({ q: 1, skip: undefined }); return [r.hits, r.at]',
        bindings: { search },
      })
      expect(seen).to.deep.equal([{ q: 1 }])
      expect(outcome).to.deep.equal({ ok: true, value: [['a', 'b'], '1970-01-01T00:00:00.000Z'] })
    })

    it('passes undefined to a binding called without an argument', async () => {
      const seen: unknown[] = []
      const probe: SandboxBinding = async (args) => {
        seen.push(args)
      }
      const outcome = await runSandboxed({ code: 'return await tools.probe()', bindings: { probe } })
      expect(seen).to.deep.equal([undefined])
      expect(outcome).to.deep.equal({ ok: true, value: undefined })
    })

    it('runs binding calls concurrently under Promise.all', async () => {
      const { binding, calls } = heldBinding()
      const gate: SandboxBinding = (args, signal) => {
        const pending = binding(args, signal)
        // every call is in flight before any settles: a sequential program would wait forever
        if (calls.length === 3) for (const call of calls) call.resolve(call.args)
        return pending
      }
      const outcome = await runSandboxed({
        code: 'return await Promise.all([tools.gate(1), tools.gate(2), tools.gate(3)])',
        bindings: { gate },
      })
      expect(outcome).to.deep.equal({ ok: true, value: [1, 2, 3] })
    })

    it('starts on the host together the binding calls the program started together', async () => {
      let started = 0
      const seen: number[] = []
      const probe: SandboxBinding = async () => {
        started++
        // the host's other work for this turn runs meanwhile: a call sent on its own would come later
        for (let step = 0; step < 10; step++) await Promise.resolve()
        seen.push(started)
      }
      const outcome = await runSandboxed({ code: 'await Promise.all([tools.probe(), tools.probe()]); return "both"', bindings: { probe } })
      expect(outcome).to.deep.equal({ ok: true, value: 'both' })
      expect(seen).to.deep.equal([2, 2])
    })

    it(`runs at most ${MAX_CALLS_IN_FLIGHT} binding calls of a run at once and starts the rest as earlier ones settle`, async () => {
      const { binding, calls } = heldBinding()
      let isOpen = false
      let capReached!: () => void
      const reached = new Promise<void>((resolve) => (capReached = resolve))
      const wait: SandboxBinding = (args, signal) => {
        if (isOpen) return Promise.resolve(args)
        const pending = binding(args, signal)
        if (calls.length === MAX_CALLS_IN_FLIGHT) capReached()
        return pending
      }
      const total = MAX_CALLS_IN_FLIGHT + 8
      const running = runSandboxed({
        code: `return (await Promise.all(Array.from({ length: ${total} }, (_, i) => tools.wait(i)))).length`,
        bindings: { wait },
      })
      await reached
      // one more host turn: every call the program started together reached the host in one message
      await new Promise((resolve) => setImmediate(resolve))
      expect(calls).to.have.length(MAX_CALLS_IN_FLIGHT)
      isOpen = true
      for (const call of calls) call.resolve(call.args)
      expect(await running).to.deep.equal({ ok: true, value: total })
    })

    /** A binding that holds calls with the argument "x" until the test settles them and answers any other at once with its length. */
    function holdingX(): { binding: SandboxBinding; held: HeldCall[]; whenHeld(count: number): Promise<void> } {
      const { binding, calls } = heldBinding()
      const waiters: { count: number; resolve(): void }[] = []
      const hold: SandboxBinding = (args, signal) => {
        if (args !== 'x') return Promise.resolve(typeof args === 'string' ? args.length : null)
        const pending = binding(args, signal)
        for (const waiter of waiters) if (calls.length === waiter.count) waiter.resolve()
        return pending
      }
      return {
        binding: hold,
        held: calls,
        whenHeld: (count) => new Promise<void>((resolve) => (calls.length >= count ? resolve() : waiters.push({ count, resolve }))),
      }
    }

    it('refuses in the program a call whose arguments would bring those waiting for a place past maxWaitingArgumentBytes', async () => {
      const { binding, held, whenHeld } = holdingX()
      const running = runSandboxed({
        code: `
          const inFlight = Array.from({ length: ${MAX_CALLS_IN_FLIGHT} }, () => tools.hold('x'))
          const waiting = tools.hold('a'.repeat(40))
          let refused
          try { await tools.hold('b'.repeat(40)) } catch (error) { refused = error.message }
          await Promise.all(inFlight)
          return [refused, await waiting]`,
        bindings: { hold: binding },
        maxWaitingArgumentBytes: 64,
      })
      await whenHeld(MAX_CALLS_IN_FLIGHT)
      for (const call of held) call.resolve(1)
      expect(await running).to.deep.equal({
        ok: true,
        value: [
          'tool call refused: 32 calls are in flight and the arguments waiting for a place would reach 84 bytes, over the limit of 64; await earlier calls before starting more',
          40,
        ],
      })
    })

    it('counts the arguments of a waiting call no longer once it has started', async () => {
      const { binding, held, whenHeld } = holdingX()
      const running = runSandboxed({
        code: `
          const inFlight = Array.from({ length: ${MAX_CALLS_IN_FLIGHT} }, () => tools.hold('x'))
          const first = await tools.hold('a'.repeat(40))
          inFlight.push(tools.hold('x'))
          const second = await tools.hold('b'.repeat(40))
          await Promise.all(inFlight)
          return [first, second]`,
        bindings: { hold: binding },
        maxWaitingArgumentBytes: 64,
      })
      await whenHeld(MAX_CALLS_IN_FLIGHT)
      held[0]!.resolve(1)
      // the 33rd held call: the program saw its first waiting call end and put the run back at the cap
      await whenHeld(MAX_CALLS_IN_FLIGHT + 1)
      for (const call of held.slice(1)) call.resolve(1)
      expect(await running).to.deep.equal({ ok: true, value: [40, 40] })
    })

    it('counts the arguments of a waiting call in UTF-8 bytes', async () => {
      const { binding, held, whenHeld } = holdingX()
      const running = runSandboxed({
        code: `
          const inFlight = Array.from({ length: ${MAX_CALLS_IN_FLIGHT} }, () => tools.hold('x'))
          let refused
          try { await tools.hold('é'.repeat(10)) } catch (error) { refused = error.message }
          await Promise.all(inFlight)
          return refused`,
        bindings: { hold: binding },
        maxWaitingArgumentBytes: 21,
      })
      await whenHeld(MAX_CALLS_IN_FLIGHT)
      for (const call of held) call.resolve(1)
      expect(await running).to.deep.equal({
        ok: true,
        value: 'tool call refused: 32 calls are in flight and the arguments waiting for a place would reach 22 bytes, over the limit of 21; await earlier calls before starting more',
      })
    })

    it(`lets each of ${MAX_CALLS_IN_FLIGHT} binding calls in flight listen to its signal without a MaxListenersExceededWarning`, async () => {
      const { binding, calls } = heldBinding()
      let capReached!: () => void
      const reached = new Promise<void>((resolve) => (capReached = resolve))
      const wait: SandboxBinding = (args, signal) => {
        const pending = binding(args, signal)
        if (calls.length === MAX_CALLS_IN_FLIGHT) capReached()
        return pending
      }
      const warnings: Error[] = []
      const onWarning = (warning: Error) => warnings.push(warning)
      process.on('warning', onWarning)
      try {
        const running = runSandboxed({
          code: `return (await Promise.all(Array.from({ length: ${MAX_CALLS_IN_FLIGHT} }, (_, i) => tools.wait(i)))).length`,
          bindings: { wait },
        })
        await reached
        for (const call of calls) call.resolve(call.args)
        expect(await running).to.deep.equal({ ok: true, value: MAX_CALLS_IN_FLIGHT })
        // a warning is emitted on a later tick
        await new Promise((resolve) => setImmediate(resolve))
      } finally {
        process.off('warning', onWarning)
      }
      expect(warnings.map(String)).to.deep.equal([])
    })

    it('runs binding calls one after another when the program awaits each in turn', async () => {
      const order: string[] = []
      const step: SandboxBinding = async (args) => {
        order.push(`start ${args}`)
        await Promise.resolve()
        order.push(`end ${args}`)
        return args
      }
      const outcome = await runSandboxed({
        code: 'const a = await tools.step(1); const b = await tools.step(a + 1); return a + b',
        bindings: { step },
      })
      expect(outcome).to.deep.equal({ ok: true, value: 3 })
      expect(order).to.deep.equal(['start 1', 'end 1', 'start 2', 'end 2'])
    })

    it('lets the program catch a binding rejection as an Error with the host message and code', async () => {
      const fail: SandboxBinding = async () => {
        throw Object.assign(new Error('no such page'), { code: 'NOT_FOUND' })
      }
      const outcome = await runSandboxed({
        code: 'try { await tools.fail() } catch (e) { return [e instanceof Error, e.name, e.message, e.code] }',
        bindings: { fail },
      })
      expect(outcome).to.deep.equal({ ok: true, value: [true, 'Error', 'no such page', 'NOT_FOUND'] })
    })

    it('fails the run with the binding rejection the program does not catch', async () => {
      const fail: SandboxBinding = async () => {
        throw new Error('no such page')
      }
      expect(await runSandboxed({ code: 'await tools.fail()', bindings: { fail } })).to.deep.equal({
        ok: false,
        error: 'Error: no such page',
      })
    })

    it('rejects a binding call whose host result is not JSON', async () => {
      const big: SandboxBinding = async () => 1n
      const outcome = await runSandboxed({
        code: 'try { await tools.big() } catch (e) { return e.message }',
        bindings: { big },
      })
      expect(outcome).to.deep.equal({ ok: true, value: 'tool result is not JSON: Do not know how to serialize a BigInt' })
    })

    it('rejects a binding call inside the sandbox when the argument is not JSON', async () => {
      const outcome = await runSandboxed({
        code: 'try { await tools.echo(1n) } catch (e) { return e.name }',
        bindings: { echo },
      })
      expect(outcome).to.deep.equal({ ok: true, value: 'TypeError' })
    })

    it('reports only after a binding call the program did not await has finished', async () => {
      const order: string[] = []
      const slow: SandboxBinding = async (args) => {
        order.push('call started')
        // several host turns: the program returns long before the call finishes
        for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve))
        order.push('call finished')
        return args
      }
      const outcome = await runSandboxed({ code: 'tools.slow(1); return "returned"', bindings: { slow } })
      order.push('run reported')
      expect(outcome).to.deep.equal({ ok: true, value: 'returned' })
      expect(order).to.deep.equal(['call started', 'call finished', 'run reported'])
    })

    it('runs the calls an un-awaited call chains after the program returned before the run ends', async () => {
      const seen: unknown[] = []
      const record: SandboxBinding = async (args) => {
        seen.push(args)
        return args
      }
      const outcome = await runSandboxed({
        code: 'tools.record(1).then((n) => tools.record(n + 1)); return "returned"',
        bindings: { record },
      })
      expect(outcome).to.deep.equal({ ok: true, value: 'returned' })
      expect(seen).to.deep.equal([1, 2])
    })

    it('aborts an un-awaited call at the time limit and reports after it settled', async () => {
      const { binding, calls } = heldBinding()
      // the limit leaves a cold interpreter on a loaded machine time to reach the call (100 ms did not)
      const outcome = await runSandboxed({ code: 'tools.wait(); return "returned"', bindings: { wait: binding }, timeoutMs: 1000 })
      expect(outcome).to.deep.equal({ ok: false, error: 'run_code timed out after 1000 ms' })
      expect(calls).to.have.length(1)
      expect(calls[0]!.signal.aborted).to.equal(true)
    })
  })

  describe('errors', () => {
    it('reports a thrown error as "<Name>: <message>"', async () => {
      expect(await runSandboxed({ code: 'throw new TypeError("boom")', bindings: {} })).to.deep.equal({
        ok: false,
        error: 'TypeError: boom',
      })
    })

    it('reports a thrown non-error value as "Uncaught <value>"', async () => {
      expect(await runSandboxed({ code: 'throw "boom"', bindings: {} })).to.deep.equal({ ok: false, error: 'Uncaught boom' })
      expect(await runSandboxed({ code: 'throw { code: 7 }', bindings: {} })).to.deep.equal({
        ok: false,
        error: 'Uncaught {"code":7}',
      })
    })

    it('reports a syntax error in the program as a SyntaxError', async () => {
      const outcome = await runSandboxed({ code: 'return 1 +', bindings: {} })
      expect(outcome.ok).to.equal(false)
      expect(!outcome.ok && outcome.error).to.match(/^SyntaxError: /)
    })
  })

  describe('limits', () => {
    it('stops a busy loop with "run_code timed out after <ms> ms"', async () => {
      expect(await runSandboxed({ code: 'while (true) {}', bindings: {}, timeoutMs: 100 })).to.deep.equal({
        ok: false,
        error: 'run_code timed out after 100 ms',
      })
    })

    it('stops an await that never settles at the time limit', async () => {
      const outcome = await runSandboxed({ code: 'await new Promise(() => {})', bindings: {}, timeoutMs: 100 })
      expect(outcome).to.deep.equal({ ok: false, error: 'run_code timed out after 100 ms' })
    })

    it('counts a binding call that never settles against the time limit, then aborts its signal', async () => {
      const { binding, calls } = heldBinding()
      // as above: time for a cold interpreter to reach the call
      const outcome = await runSandboxed({ code: 'await tools.wait()', bindings: { wait: binding }, timeoutMs: 1000 })
      expect(outcome).to.deep.equal({ ok: false, error: 'run_code timed out after 1000 ms' })
      expect(calls[0]!.signal.aborted).to.equal(true)
    })

    it('stops a promise-job storm at the time limit', async () => {
      const outcome = await runSandboxed({
        code: 'const spin = () => Promise.resolve().then(spin); spin(); await new Promise(() => {})',
        bindings: {},
        timeoutMs: 100,
      })
      expect(outcome).to.deep.equal({ ok: false, error: 'run_code timed out after 100 ms' })
    })

    it('stops a typed-array memory bomb with "run_code exceeded its memory limit"', async () => {
      const outcome = await runSandboxed({
        code: 'const keep = []; while (true) keep.push(new Uint8Array(1 << 20))',
        bindings: {},
        memoryBytes: 4 * MiB,
      })
      expect(outcome).to.deep.equal({ ok: false, error: 'run_code exceeded its memory limit' })
    })

    it('stops an object memory bomb at the memory limit', async () => {
      const outcome = await runSandboxed({
        code: 'const keep = []; while (true) keep.push({ n: keep.length, s: String(keep.length) })',
        bindings: {},
        memoryBytes: 4 * MiB,
      })
      expect(outcome).to.deep.equal({ ok: false, error: sandboxMessages.memory })
    })

    it('rejects a binding result larger than the memory limit inside the sandbox', async () => {
      const huge: SandboxBinding = async () => 'x'.repeat(2 * MiB)
      const outcome = await runSandboxed({
        code: 'try { await tools.huge() } catch (e) { return e.message }',
        bindings: { huge },
        memoryBytes: MiB,
      })
      expect(outcome).to.deep.equal({
        ok: true,
        value: `tool result of ${2 * MiB + 2} characters does not fit in the memory limit`,
      })
    })

    it('stops runaway recursion with "run_code exceeded its stack limit"', async () => {
      expect(await runSandboxed({ code: 'const f = () => f() + 1; return f()', bindings: {} })).to.deep.equal({
        ok: false,
        error: 'run_code exceeded its stack limit',
      })
    })

    it('reports nesting that exhausts the host stack as the stack limit and recovers for the next run', async () => {
      const nested = `${'('.repeat(5000)}1${')'.repeat(5000)}`
      expect(await runSandboxed({ code: `return ${nested}`, bindings: {} })).to.deep.equal({
        ok: false,
        error: sandboxMessages.stack,
      })
      expect(await runSandboxed({ code: 'return 1', bindings: {} })).to.deep.equal({ ok: true, value: 1 })
    })

    it('rejects limits that are not positive with a RangeError', async () => {
      const zero = await runSandboxed({ code: '', bindings: {}, timeoutMs: 0 }).catch((error: unknown) => error)
      expect(zero).to.be.instanceOf(RangeError)
      const tiny = await runSandboxed({ code: '', bindings: {}, memoryBytes: 1024 }).catch((error: unknown) => error)
      expect(tiny).to.be.instanceOf(RangeError)
    })

    it('rejects a maxWaitingArgumentBytes that is not a non-negative safe integer with a RangeError naming it', async () => {
      for (const maxWaitingArgumentBytes of [-1, 1.5, 2 ** 53]) {
        const error = await runSandboxed({ code: '', bindings: {}, maxWaitingArgumentBytes }).catch((reason: unknown) => reason)
        expect(error).to.be.instanceOf(RangeError).with.property('message', 'run_code maxWaitingArgumentBytes must be a non-negative safe integer')
      }
    })

    // past them the run would time out after 1 ms, or fail to make its interpreter instance
    it('rejects a timeoutMs past 2147483647 and a memoryBytes past MAX_MEMORY_BYTES with a RangeError naming the limit', async () => {
      const late = await runSandboxed({ code: '', bindings: {}, timeoutMs: 2 ** 31 }).catch((error: unknown) => error)
      expect(late).to.be.instanceOf(RangeError).with.property('message', 'run_code timeoutMs must be a positive number of at most 2147483647')
      const huge = await runSandboxed({ code: '', bindings: {}, memoryBytes: MAX_MEMORY_BYTES + 1 }).catch((error: unknown) => error)
      expect(huge).to.be.instanceOf(RangeError).with.property('message', `run_code memoryBytes must be an integer from 1048576 to ${MAX_MEMORY_BYTES}`)
    })
  })

  describe('a program that stalls its thread', () => {
    it('keeps the host event loop turning while a program busy-loops', async () => {
      let ticks: { stop(): number } | undefined
      // counting starts once the program runs: starting a worker or an interpreter also yields
      const started: SandboxBinding = async () => {
        ticks = countTicks()
      }
      const outcome = await runSandboxed({ code: 'await tools.started(); while (true) {}', bindings: { started }, timeoutMs: 300 })
      // a blocked host thread turns a handful of times around the run; a free one thousands
      expect(ticks?.stop()).to.be.greaterThan(50)
      expect(outcome).to.deep.equal({ ok: false, error: 'run_code timed out after 300 ms' })
    })

    const stalls = [
      'Array.prototype.includes.call({ length: 2 ** 53 - 1 }, 1)',
      'Array.prototype.indexOf.call({ length: 2 ** 53 - 1 }, 1)',
      'Array.prototype.lastIndexOf.call({ length: 2 ** 53 - 1 }, 1)',
      'Array.prototype.reverse.call({ length: 2 ** 53 - 1 })',
      'new Array(2 ** 32 - 1).concat([1])',
      'new Array(2 ** 32 - 1).forEach(() => {})',
    ]
    for (const stall of stalls) {
      it(`stops \`${stall}\` at the time limit`, async () => {
        const outcome = await runSandboxed({ code: `${stall}; return "finished"`, bindings: {}, timeoutMs: 100 })
        expect(outcome).to.deep.equal({ ok: false, error: 'run_code timed out after 100 ms' })
      })
    }

    it('ends a program stuck in one builtin call as soon as its signal aborts', async () => {
      const controller = new AbortController()
      // the abort lands once the program is inside the builtin, which would not return for years
      const started: SandboxBinding = async () => {
        setImmediate(() => controller.abort())
      }
      const outcome = await runSandboxed({
        code: 'await tools.started(); Array.prototype.includes.call({ length: 2 ** 53 - 1 }, 1); return "finished"',
        bindings: { started },
        timeoutMs: 60_000,
        signal: controller.signal,
      })
      expect(outcome).to.deep.equal({ ok: false, error: 'run_code was aborted' })
    })

    it('runs the next program on a new worker after one was stopped', async () => {
      await runSandboxed({ code: 'while (true) {}', bindings: {}, timeoutMs: 50 })
      expect(await runSandboxed({ code: 'return 1', bindings: {} })).to.deep.equal({ ok: true, value: 1 })
    })
  })

  describe('NUL characters', () => {
    it('keeps a NUL character inside a string literal', async () => {
      expect(await runSandboxed({ code: 'return "a\0b".length', bindings: {} })).to.deep.equal({ ok: true, value: 3 })
    })

    it('runs the code after a NUL character inside a comment', async () => {
      expect(await runSandboxed({ code: 'let n = 1 // one\0\nn += 1\nreturn n', bindings: {} })).to.deep.equal({ ok: true, value: 2 })
    })

    it('rejects a NUL character between tokens as a syntax error instead of ignoring the rest', async () => {
      const outcome = await runSandboxed({ code: 'const a = 1\0; return a', bindings: {} })
      expect(outcome).to.deep.equal({ ok: false, error: "SyntaxError: expecting ';'" })
    })
  })

  describe('abort', () => {
    it('stops a program waiting on a binding with "run_code was aborted"', async () => {
      const controller = new AbortController()
      const { binding, calls } = heldBinding()
      const wait: SandboxBinding = (args, signal) => {
        const pending = binding(args, signal)
        controller.abort()
        return pending
      }
      const outcome = await runSandboxed({ code: 'await tools.wait()', bindings: { wait }, signal: controller.signal })
      expect(outcome).to.deep.equal({ ok: false, error: 'run_code was aborted' })
      expect(calls[0]!.signal.aborted).to.equal(true)
    })

    it('does not start a program whose signal is already aborted', async () => {
      const { binding, calls } = heldBinding()
      const outcome = await runSandboxed({ code: 'await tools.wait()', bindings: { wait: binding }, signal: AbortSignal.abort() })
      expect(outcome).to.deep.equal({ ok: false, error: sandboxMessages.aborted })
      expect(calls).to.have.length(0)
    })
  })

  describe('isolation', () => {
    it('gives the program no require, process, fetch or timers', async () => {
      const outcome = await runSandboxed({
        code: 'return [typeof require, typeof process, typeof fetch, typeof setTimeout, typeof module, typeof globalThis.std]',
        bindings: {},
      })
      expect(outcome).to.deep.equal({ ok: true, value: Array(6).fill('undefined') })
    })

    it('discards console output', async () => {
      const outcome = await runSandboxed({ code: 'console.log("hi"); console.error("x"); return "ran"', bindings: {} })
      expect(outcome).to.deep.equal({ ok: true, value: 'ran' })
    })

    it('exposes exactly the bindings as a frozen tools object', async () => {
      const outcome = await runSandboxed({
        code: 'tools.extra = 1; return [Object.keys(tools), Object.isFrozen(tools), typeof tools.echo]',
        bindings: { echo, other: echo },
      })
      expect(outcome).to.deep.equal({ ok: true, value: [['echo', 'other'], true, 'function'] })
    })

    it('starts every run from fresh globals', async () => {
      await runSandboxed({ code: 'globalThis.leak = 1', bindings: {} })
      expect(await runSandboxed({ code: 'return typeof leak', bindings: {} })).to.deep.equal({ ok: true, value: 'undefined' })
    })

    it('keeps concurrent runs apart', async function () {
      // eight runs at once start eight workers; under tsx each start transpiles the worker's modules
      this.timeout(60_000)
      const outcomes = await Promise.all(
        Array.from({ length: 8 }, (_, index) =>
          runSandboxed({ code: `globalThis.mine = ${index}; await tools.echo(0); return mine`, bindings: { echo } }),
        ),
      )
      expect(outcomes).to.deep.equal(Array.from({ length: 8 }, (_, index) => ({ ok: true, value: index })))
    })

    it('completes 200 runs in a row, disposing every handle', async () => {
      // a handle left alive makes QuickJS fail the runtime's disposal, which would fail the run
      const fail: SandboxBinding = async () => {
        throw new Error('x')
      }
      const programs = [
        'return await tools.echo({ n: 1 })',
        'try { await tools.fail() } catch (e) { return e.message }',
        'tools.echo(1); tools.echo(2); return 3',
        'throw new Error("boom")',
      ]
      let completed = 0
      for (let run = 0; run < 200; run++) {
        const outcome = await runSandboxed({ code: programs[run % programs.length]!, bindings: { echo, fail } })
        if (outcome.ok || outcome.error === 'Error: boom') completed++
      }
      expect(completed).to.equal(200)
    })
  })
})
