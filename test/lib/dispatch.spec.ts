import { expect } from 'chai'
import { type DispatchMode, type Listener, ListenerDispatch } from '../../lib/dispatch.ts'

/** A dispatch over a bare listener table, shaped as cordis's `EventsService` keeps it. */
function dispatchOver(listeners: Listener[]): ListenerDispatch {
  return new ListenerDispatch({ settle: listeners.map((callback) => ({ callback })) }, () => {})
}

type Next = () => Promise<string[]>

describe('ListenerDispatch.waterfallAsync', () => {
  it('runs listeners outermost first and the core innermost', async () => {
    const outer = async (_trail: string[], next: Next) => [...(await next()), 'outer']
    const inner = async (_trail: string[], next: Next) => [...(await next()), 'inner']
    const result = await dispatchOver([outer, inner] as Listener[]).waterfallAsync('settle', [[]], () => ['core'])
    expect(result).to.deep.equal(['core', 'inner', 'outer'])
  })

  it('lets a listener that does not call next() short-circuit the inner ones and the core', async () => {
    let reachedCore = false
    const stop = () => ['stopped']
    const never = () => {
      throw new Error('must not run')
    }
    const result = await dispatchOver([stop, never] as Listener[]).waterfallAsync('settle', [], () => {
      reachedCore = true
      return ['core']
    })
    expect(result).to.deep.equal(['stopped'])
    expect(reachedCore).to.equal(false)
  })

  it('rejects when a listener calls next() twice', async () => {
    const twice = (next: Next) => {
      void next()
      return next()
    }
    const error = await dispatchOver([twice] as Listener[])
      .waterfallAsync('settle', [], () => ['core'])
      .then(
        () => undefined,
        (thrown: Error) => thrown,
      )
    expect(error?.message).to.equal('next() called twice in a "settle" listener')
    expect([error?.name, (error as { code?: unknown } | undefined)?.code]).to.deep.equal(['HookMisuseError', 'HOOK_MISUSE'])
  })

  it('keeps the stack flat through 50,000 listeners that each return next() synchronously', async () => {
    const pass = (next: Next) => next()
    const listeners = new Array<Listener>(50_000).fill(pass as Listener)
    expect(await dispatchOver(listeners).waterfallAsync('settle', [], () => ['core'])).to.deep.equal(['core'])
  })

  it('calls the core directly when nobody listens', async () => {
    expect(await new ListenerDispatch({}, () => {}).waterfallAsync('settle', [], () => ['core'])).to.deep.equal(['core'])
  })
})

function dispatchWith(listeners: Listener[]): ListenerDispatch {
  return new ListenerDispatch({ 'test/hook': listeners.map((callback) => ({ callback })) }, () => {})
}

describe('ListenerDispatch.waterfallAsync for the tool hooks', () => {
  it('gives every listener a next() that returns a promise, even over plain inner values', async () => {
    const kinds: string[] = []
    const outer = ((next: () => unknown) => {
      const inner = next()
      kinds.push(inner instanceof Promise ? 'promise' : typeof inner)
      return inner
    }) as Listener
    const plain = (() => 'inner') as Listener
    expect(await dispatchWith([outer, plain]).waterfallAsync('test/hook', [], () => 'core')).to.equal('inner')
    expect(kinds).to.deep.equal(['promise'])
  })

  it('hands the innermost listener a core that throws as a rejected next(), not a throw', async () => {
    const seen: string[] = []
    const innermost = ((next: () => Promise<unknown>) => {
      const inner = next()
      seen.push(inner instanceof Promise ? 'promise' : typeof inner)
      return inner.catch((error: Error) => `caught ${error.message}`)
    }) as Listener
    const result = await dispatchWith([innermost]).waterfallAsync('test/hook', [], () => {
      throw new Error('core broke')
    })
    expect([seen, result]).to.deep.equal([['promise'], 'caught core broke'])
  })

  it('resolves to the core’s value when nobody listens', async () => {
    expect(await dispatchWith([]).waterfallAsync('test/hook', [], () => 'core')).to.equal('core')
  })

  it('turns a listener’s synchronous throw into a rejection', async () => {
    const failing = (() => {
      throw new Error('listener broke')
    }) as Listener
    let promise: Promise<unknown> | undefined
    expect(() => {
      promise = dispatchWith([failing]).waterfallAsync('test/hook', [], () => 'core')
    }).not.to.throw()
    let caught: unknown
    await promise!.catch((error: unknown) => (caught = error))
    expect((caught as Error).message).to.equal('listener broke')
  })
})

describe('ListenerDispatch observer', () => {
  function observed(): { dispatch: ListenerDispatch; seen: [DispatchMode, string, readonly unknown[]][] } {
    const seen: [DispatchMode, string, readonly unknown[]][] = []
    const table = { 'test/hook': [{ callback: (() => undefined) as Listener }] }
    const dispatch = new ListenerDispatch(table, () => {}, (mode, name, args) => void seen.push([mode, name, args]))
    return { dispatch, seen }
  }

  it('tells the observer of each dispatch with its mode in cordis\'s words, name and arguments', async () => {
    const { dispatch, seen } = observed()
    dispatch.emit('test/hook', [1])
    dispatch.emitStrict('test/hook', [2])
    await dispatch.serial('test/hook', [3])
    dispatch.bail('test/hook', [4])
    dispatch.waterfall('test/hook', [5], () => undefined)
    await dispatch.waterfallAsync('test/hook', [6], () => undefined)
    await dispatch.ask('test/hook', [7])
    expect(seen).to.deep.equal([
      ['emit', 'test/hook', [1]],
      ['emit', 'test/hook', [2]],
      ['serial', 'test/hook', [3]],
      ['bail', 'test/hook', [4]],
      ['waterfall', 'test/hook', [5]],
      ['waterfall', 'test/hook', [6]],
      ['serial', 'test/hook', [7]],
    ])
  })

  it('reports a throwing observer to the sink and still runs the listeners', () => {
    const reported: [unknown, string][] = []
    const heard: unknown[] = []
    const failure = new Error('observer broke')
    const table = { 'test/hook': [{ callback: ((value: unknown) => void heard.push(value)) as Listener }] }
    const dispatch = new ListenerDispatch(
      table,
      (error, event) => void reported.push([error, event]),
      () => {
        throw failure
      },
    )
    dispatch.emitStrict('test/hook', ['payload'])
    expect(heard).to.deep.equal(['payload'])
    expect(reported).to.deep.equal([[failure, 'test/hook']])
  })
})

describe('ListenerDispatch with one listener of the agent’s own', () => {
  const none = new ListenerDispatch({}, () => {})

  it('answers bail with the listener’s answer, and undefined for a false one', () => {
    const answers = [7, false, null].map((answer) => none.bail('test/hook', [], [(() => answer) as Listener]))
    expect(answers).to.deep.equal([7, undefined, undefined])
  })

  it('hands waterfall’s core answer through the listener’s next()', () => {
    const listener = ((value: number, next: () => number) => next() + value) as Listener
    expect(none.waterfall('test/hook', [1], () => 10, [listener])).to.equal(11)
  })

  it('rejects a second next() call in waterfall', () => {
    const twice = ((next: () => number) => {
      next()
      return next()
    }) as Listener
    expect(() => none.waterfall('test/hook', [], () => 1, [twice])).to.throw('next() called twice in a "test/hook" listener')
  })

  it('does not call a listener the only one added during its own dispatch', () => {
    const heard: string[] = []
    const local: Listener[] = []
    const late = (() => void heard.push('late')) as Listener
    local.push((() => {
      heard.push('only')
      local.push(late)
    }) as Listener)
    none.emit('test/hook', [], local)
    expect(heard).to.deep.equal(['only'])
  })
})
