import { expect } from 'chai'
import { TurnCancelledError, TurnState } from '../../plugins/host/agents/turn-state.ts'

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

  it('rejects a pending race with the cancellation reason while the raced promise never settles', async () => {
    const state = new TurnState(1)
    const raced = state.race(new Promise<never>(() => {}))
    state.cancel({ kind: 'user' })
    const error = await raced.then(
      () => undefined,
      (reason: unknown) => reason,
    )
    expect(error).to.be.instanceOf(TurnCancelledError)
    expect(error).to.equal(state.reason)
  })

  it('rejects a race started after the cancellation without waiting for the raced promise', async () => {
    const state = new TurnState(1)
    state.cancel({ kind: 'disposed' })
    const error = await state.race(Promise.reject(new Error('late'))).catch((reason: unknown) => reason)
    expect((error as Error).message).to.equal('turn cancelled (disposed)')
  })

  it('settles a race on a bare value, as Promise.race would', async () => {
    const state = new TurnState(1)
    expect(await state.race(42)).to.equal(42)
  })
})
