import { expect } from 'chai'
import { Dispatch, type Listener } from '../../lib/dispatch.ts'

function dispatchWith(listeners: Listener[]): Dispatch {
  const events = { _hooks: { 'test/hook': listeners.map((callback) => ({ callback })) } }
  return new Dispatch(events, () => {})
}

describe('Dispatch.waterfallAsync', () => {
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
