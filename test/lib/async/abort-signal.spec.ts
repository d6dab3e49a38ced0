import { getEventListeners } from 'node:events'
import { expect } from 'chai'
import { type AbortSubscription, subscribe, subscribeAbort, unsubscribe } from '../../../lib/async/abort-signal.ts'

describe('subscribeAbort', () => {
  it('shares one listener on the signal among all its subscribers', () => {
    const controller = new AbortController()
    const removers = Array.from({ length: 20 }, () => subscribeAbort(controller.signal, () => {}))
    expect(getEventListeners(controller.signal, 'abort')).to.have.length(1)
    for (const remove of removers) remove()
  })

  it('calls every subscriber once, in subscription order, when the signal aborts', () => {
    const controller = new AbortController()
    const calls: number[] = []
    for (let i = 0; i < 3; i++) subscribeAbort(controller.signal, () => void calls.push(i))
    controller.abort()
    controller.abort()
    expect(calls).to.deep.equal([0, 1, 2])
    expect(getEventListeners(controller.signal, 'abort')).to.have.length(0)
  })

  it('removes the shared listener with its last subscriber, and a removed one is not called', () => {
    const controller = new AbortController()
    const calls: string[] = []
    const first = subscribeAbort(controller.signal, () => void calls.push('first'))
    const second = subscribeAbort(controller.signal, () => void calls.push('second'))
    first()
    first()
    expect(getEventListeners(controller.signal, 'abort')).to.have.length(1)
    second()
    expect(getEventListeners(controller.signal, 'abort')).to.have.length(0)
    subscribeAbort(controller.signal, () => void calls.push('third'))
    controller.abort()
    expect(calls).to.deep.equal(['third'])
  })

  it('adds a plain function as the listener, which Node calls without a wrapper of its own', () => {
    const controller = new AbortController()
    const remove = subscribeAbort(controller.signal, () => {})
    const [listener] = getEventListeners(controller.signal, 'abort')
    expect(listener).to.be.a('function')
    remove()
  })
})

describe('subscribe and unsubscribe (a subscription object of the subscriber\'s own)', () => {
  function counting(): AbortSubscription & { calls: number } {
    return {
      calls: 0,
      onAbort() {
        this.calls++
      },
    }
  }

  it('calls the object\'s onAbort once when the signal aborts, and leaves no listener', () => {
    const controller = new AbortController()
    const subscription = counting()
    subscribe(controller.signal, subscription)
    controller.abort()
    controller.abort()
    expect(subscription.calls).to.equal(1)
    expect(getEventListeners(controller.signal, 'abort')).to.have.length(0)
  })

  it('removes exactly the object unsubscribed, keeping the others and their shared listener', () => {
    const controller = new AbortController()
    const [first, second] = [counting(), counting()]
    subscribe(controller.signal, first)
    subscribe(controller.signal, second)
    unsubscribe(controller.signal, first)
    unsubscribe(controller.signal, first)
    expect(getEventListeners(controller.signal, 'abort')).to.have.length(1)
    controller.abort()
    expect([first.calls, second.calls]).to.deep.equal([0, 1])
  })

  it('removes the listener with the last object unsubscribed', () => {
    const controller = new AbortController()
    const subscription = counting()
    subscribe(controller.signal, subscription)
    unsubscribe(controller.signal, subscription)
    expect(getEventListeners(controller.signal, 'abort')).to.have.length(0)
  })
})
