import { expect } from 'chai'
import { type ResultReader, TurnCancelledError, TurnState } from '../../plugins/host/agents/turn-state.ts'
import { heapAfterGc } from '../support/heap.ts'

describe('TurnState', () => {
  it('hands a reader an already-aborted signal when the turn was cancelled before anyone read it', () => {
    const state = new TurnState(1)
    state.cancel({ kind: 'parent' })
    const { signal } = state
    expect(signal.aborted).to.equal(true)
    expect(signal.reason).to.equal(state.reason)
    expect((signal.reason as TurnCancelledError).message).to.equal('turn cancelled (parent)')
  })

  it('aborts a signal made before the cancellation, once, with the first cause', () => {
    const state = new TurnState(3)
    const signal = state.signal
    let aborts = 0
    signal.addEventListener('abort', () => aborts++)
    state.cancel({ kind: 'user' })
    state.cancel({ kind: 'disposed' })
    expect(aborts).to.equal(1)
    expect(state.cause).to.deep.equal({ kind: 'user' })
    expect((signal.reason as TurnCancelledError).cancelCause).to.deep.equal({ kind: 'user' })
  })

  it('rejects a pending read with the cancellation reason while the iterator\'s next() never settles', async () => {
    const state = new TurnState(1)
    const read = state.read(iteratorOf(() => new Promise<never>(() => {})), collect([]))
    state.cancel({ kind: 'user' })
    const error = await read.then(
      () => undefined,
      (reason: unknown) => reason,
    )
    expect(error).to.be.instanceOf(TurnCancelledError)
    expect(error).to.equal(state.reason)
  })

  it('rejects a read started after the cancellation without waiting for next()\'s promise', async () => {
    const state = new TurnState(1)
    state.cancel({ kind: 'disposed' })
    const error = await state.read(iteratorOf(() => Promise.reject(new Error('late'))), collect([])).catch((reason: unknown) => reason)
    expect((error as Error).message).to.equal('turn cancelled (disposed)')
  })

  it('settles results given as bare values or thenables, as Promise.race would', async () => {
    const state = new TurnState(1)
    const results: IteratorResult<number>[] = [
      { value: 1, done: false },
      { value: 2, done: false },
      { value: undefined, done: true },
    ]
    let i = 0
    const iterator = iteratorOf(() => {
      const result = results[i++]!
      // biome-ignore lint/suspicious/noThenProperty: the case is a thenable result
      return (i === 2 ? { then: (resolve: (value: unknown) => void) => resolve(result) } : result) as Promise<IteratorResult<number>>
    })
    const taken: unknown[] = []
    await state.read(iterator, collect(taken))
    expect(taken).to.deep.equal(results)
  })

  it('hands the reader no result that arrives after the cancellation, and asks for no more', async () => {
    const state = new TurnState(1)
    let settle!: (result: IteratorResult<number>) => void
    let calls = 0
    const iterator = iteratorOf(() => {
      calls++
      return new Promise<IteratorResult<number>>((resolve) => (settle = resolve))
    })
    const taken: unknown[] = []
    const read = state.read(iterator, collect(taken))
    state.cancel({ kind: 'user' })
    settle({ value: 1, done: false })
    const error = await read.catch((reason: unknown) => reason)
    expect(error).to.equal(state.reason)
    expect(taken).to.deep.equal([])
    expect(calls).to.equal(1)
  })

  it('ends a read with what the reader throws, asking the iterator for nothing more', async () => {
    const state = new TurnState(1)
    let calls = 0
    const iterator = iteratorOf(() => {
      calls++
      return Promise.resolve({ value: calls, done: false })
    })
    const reader = {
      take(): boolean {
        throw new Error('bad part')
      },
    }
    const error = await state.read(iterator, reader).catch((reason: unknown) => reason)
    expect((error as Error).message).to.equal('bad part')
    expect(calls).to.equal(1)
  })

  it('ends a read with what next() throws or its promise rejects with', async () => {
    const state = new TurnState(1)
    const thrown = await state
      .read(
        iteratorOf(() => {
          throw new Error('sync')
        }),
        collect([]),
      )
      .catch((reason: unknown) => reason)
    const rejected = await state.read(iteratorOf(() => Promise.reject(new Error('async'))), collect([])).catch((reason: unknown) => reason)
    expect([(thrown as Error).message, (rejected as Error).message]).to.deep.equal(['sync', 'async'])
  })

  it('holds nothing of its turn once over, while something still holds the reactions it attached', async () => {
    // what V8 may leave referenced from old-space garbage until a full collection: a finished
    // read that still held its turn would keep the turn's whole graph alive through scavenges
    const handlers: unknown[] = []
    const turn = await (async () => {
      const state = new TurnState(1)
      let calls = 0
      const iterator = iteratorOf(() => {
        const result = calls++ ? { value: undefined, done: true } : { value: 1, done: false }
        const pending = Promise.resolve(result as IteratorResult<number>)
        Object.defineProperty(pending, 'then', {
          value(this: Promise<unknown>, onFulfilled: unknown, onRejected: unknown) {
            handlers.push(onFulfilled, onRejected)
            return Promise.prototype.then.call(this, onFulfilled as () => void, onRejected as () => void)
          },
        })
        return pending
      })
      await state.read(iterator, collect([]))
      return new WeakRef(state)
    })()
    // a WeakRef holds its target until the job that made it is over
    await new Promise(setImmediate)
    await heapAfterGc()
    expect(handlers).to.have.length(4)
    expect(turn.deref()).to.equal(undefined)
  })
})

/** An iterator whose `next()` is `next`. */
function iteratorOf<T>(next: () => Promise<IteratorResult<T>>): AsyncIterator<T> {
  return { next }
}

/** A reader that keeps every result in `into` and is done at the first `done` one. */
function collect(into: unknown[]): ResultReader {
  return {
    take(result) {
      into.push(result)
      return (result as IteratorResult<unknown>).done === true
    },
  }
}
