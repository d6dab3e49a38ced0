import { expect } from 'chai'
import fc from 'fast-check'
import { toolCallBatches } from '../../lib/tool-batches.ts'

/** Calls named by letter; upper case marks a concurrent tool. */
const isUpper = (call: string): boolean => call === call.toUpperCase()

describe('toolCallBatches (SPEC §8.1)', () => {
  it('yields nothing for a step without calls', () => {
    expect([...toolCallBatches([], isUpper)]).to.deep.equal([])
  })

  it('puts every call of a step of non-concurrent tools in a batch of its own', () => {
    expect([...toolCallBatches(['a', 'b', 'c'], isUpper)]).to.deep.equal([['a'], ['b'], ['c']])
  })

  it('groups each maximal run of consecutive concurrent calls, split by every barrier', () => {
    expect([...toolCallBatches(['A', 'B', 'c', 'D', 'E', 'F', 'g', 'h', 'I'], isUpper)]).to.deep.equal([
      ['A', 'B'],
      ['c'],
      ['D', 'E', 'F'],
      ['g'],
      ['h'],
      ['I'],
    ])
  })

  it('forms a batch only when the consumer asks for it, so later calls are classified late', () => {
    const concurrent = new Set(['a', 'b'])
    const batches = toolCallBatches(['a', 'x', 'b', 'c'], (call) => concurrent.has(call))
    expect(batches.next().value).to.deep.equal(['a'])
    // what the first batch did (e.g. register a tool) counts for the calls after it
    concurrent.add('x')
    concurrent.add('c')
    expect(batches.next().value).to.deep.equal(['x', 'b', 'c'])
    expect(batches.next().done).to.equal(true)
  })

  it('keeps every call exactly once, in model order, with no two adjacent concurrent batches', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom('a', 'b', 'C', 'D'), { maxLength: 30 }), (calls) => {
        const batches = [...toolCallBatches(calls, isUpper)]
        expect(batches.flat()).to.deep.equal(calls)
        for (const [index, batch] of batches.entries()) {
          expect(batch).to.not.be.empty
          if (batch.length > 1 || isUpper(batch[0])) {
            expect(batch.every(isUpper)).to.equal(true)
            const next = batches[index + 1]
            if (next) expect(isUpper(next[0])).to.equal(false)
          }
        }
      }),
    )
  })
})
