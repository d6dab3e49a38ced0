import { expect } from 'chai'
import {
  assertMaxDepth,
  assertWithinCap,
  childDepth,
  effectiveCap,
  isNonNegativeSafeInteger,
  lowerCap,
  parentDepth,
} from '../../../lib/delegation/depth.ts'
import { SubagentDepthError, SubagentError } from '../../../lib/errors.ts'

const MAX_DEPTH_MESSAGE = 'subagent maxDepth must be a non-negative safe integer'
const SUBAGENT_DEPTH_MESSAGE = 'agent subagentDepth must be a non-negative safe integer'
const CHILD_DEPTH_MESSAGE = 'subagent child depth exceeds the safe-integer range'

const invalidDepths: [string, unknown][] = [
  ['a NaN', Number.NaN],
  ['a fractional', 1.5],
  ['a negative', -1],
  ['a negative zero', -0],
  ['an unsafe (2 ** 53)', 2 ** 53],
  ['an infinite', Number.POSITIVE_INFINITY],
  ['a numeric string', '1'],
  ['a null', null],
]

describe('isNonNegativeSafeInteger', () => {
  it('accepts zero', () => {
    expect(isNonNegativeSafeInteger(0)).to.equal(true)
  })

  it('accepts the largest safe integer', () => {
    expect(isNonNegativeSafeInteger(Number.MAX_SAFE_INTEGER)).to.equal(true)
  })

  for (const [label, value] of invalidDepths) {
    it(`rejects ${label} value`, () => {
      expect(isNonNegativeSafeInteger(value)).to.equal(false)
    })
  }
})

describe('assertMaxDepth', () => {
  it('lets a missing maxDepth pass', () => {
    expect(() => assertMaxDepth(undefined)).not.to.throw()
  })

  it('accepts maxDepth 0', () => {
    expect(() => assertMaxDepth(0)).not.to.throw()
  })

  it('accepts a positive safe-integer maxDepth', () => {
    expect(() => assertMaxDepth(Number.MAX_SAFE_INTEGER)).not.to.throw()
  })

  for (const [label, value] of invalidDepths) {
    it(`rejects ${label} maxDepth with a TypeError`, () => {
      expect(() => assertMaxDepth(value)).to.throw(TypeError, MAX_DEPTH_MESSAGE)
    })
  }

  it('throws exactly the pinned maxDepth message', () => {
    try {
      assertMaxDepth(-1)
      expect.fail('assertMaxDepth did not throw')
    } catch (error) {
      expect((error as Error).message).to.equal(MAX_DEPTH_MESSAGE)
    }
  })
})

describe('parentDepth', () => {
  it('is 0 for a root agent with no header or runtime depth', () => {
    expect(parentDepth(undefined, undefined)).to.equal(0)
  })

  it('uses the header depth when the options carry none', () => {
    expect(parentDepth(2, undefined)).to.equal(2)
  })

  it('uses the runtime subagentDepth when the header has none', () => {
    expect(parentDepth(undefined, 3)).to.equal(3)
  })

  it('lets a deeper runtime subagentDepth deepen the count', () => {
    expect(parentDepth(1, 4)).to.equal(4)
  })

  it('never lets a shallower runtime subagentDepth lower the header depth', () => {
    expect(parentDepth(5, 0)).to.equal(5)
  })

  for (const [label, value] of invalidDepths) {
    it(`rejects ${label} runtime subagentDepth with a TypeError`, () => {
      expect(() => parentDepth(0, value)).to.throw(TypeError, SUBAGENT_DEPTH_MESSAGE)
    })
  }

  it('throws exactly the pinned subagentDepth message', () => {
    try {
      parentDepth(undefined, 1.5)
      expect.fail('parentDepth did not throw')
    } catch (error) {
      expect((error as Error).message).to.equal(SUBAGENT_DEPTH_MESSAGE)
    }
  })
})

describe('childDepth', () => {
  it('places the child one level below its parent', () => {
    expect(childDepth(0)).to.equal(1)
  })

  it('reaches the largest safe integer', () => {
    expect(childDepth(Number.MAX_SAFE_INTEGER - 1)).to.equal(Number.MAX_SAFE_INTEGER)
  })

  it('throws a RangeError beyond the safe-integer range', () => {
    expect(() => childDepth(Number.MAX_SAFE_INTEGER)).to.throw(RangeError, CHILD_DEPTH_MESSAGE)
  })

  it('throws exactly the pinned child-depth message', () => {
    try {
      childDepth(Number.MAX_SAFE_INTEGER)
      expect.fail('childDepth did not throw')
    } catch (error) {
      expect((error as Error).message).to.equal(CHILD_DEPTH_MESSAGE)
    }
  })
})

describe('effectiveCap', () => {
  it('is Infinity when no cap is given', () => {
    expect(effectiveCap()).to.equal(Number.POSITIVE_INFINITY)
  })

  it('is Infinity when every cap is undefined', () => {
    expect(effectiveCap(undefined, undefined)).to.equal(Number.POSITIVE_INFINITY)
  })

  it('picks the smaller of the request and policy caps', () => {
    expect(effectiveCap(5, 3)).to.equal(3)
  })

  it('skips an undefined cap', () => {
    expect(effectiveCap(undefined, 4)).to.equal(4)
  })

  it('keeps a cap of 0', () => {
    expect(effectiveCap(2, 0, undefined)).to.equal(0)
  })
})

describe('assertWithinCap', () => {
  it('allows a child exactly at the cap', () => {
    expect(() => assertWithinCap(2, 2)).not.to.throw()
  })

  it('allows any depth under an infinite cap', () => {
    expect(() => assertWithinCap(Number.MAX_SAFE_INTEGER, Number.POSITIVE_INFINITY)).not.to.throw()
  })

  it('forbids any child under cap 0', () => {
    expect(() => assertWithinCap(1, 0)).to.throw(SubagentDepthError, 'subagent depth 1 exceeds maxDepth 0')
  })

  it('reports the attempted depth and the cap on the error', () => {
    try {
      assertWithinCap(3, 2)
      expect.fail('assertWithinCap did not throw')
    } catch (error) {
      expect(SubagentError.is(error)).to.equal(true)
      const depthError = error as SubagentDepthError
      expect(depthError.name).to.equal('SubagentDepthError')
      expect(depthError.code).to.equal('DEPTH_EXCEEDED')
      expect(depthError.attemptedDepth).to.equal(3)
      expect(depthError.maxDepth).to.equal(2)
      expect(depthError.message).to.equal('subagent depth 3 exceeds maxDepth 2')
    }
  })
})

describe('lowerCap', () => {
  it('lowers a cap to a smaller one', () => {
    expect(lowerCap(3, 1, 'cap')).to.equal(1)
  })

  it('keeps the current cap when asked for a larger one', () => {
    expect(lowerCap(1, 3, 'cap')).to.equal(1)
  })

  it('lowers an unbounded cap to zero', () => {
    expect(lowerCap(Number.POSITIVE_INFINITY, 0, 'cap')).to.equal(0)
  })

  for (const [label, value] of invalidDepths) {
    it(`rejects ${label} cap with a TypeError naming the field`, () => {
      expect(() => lowerCap(3, value, 'subagent plan depth cap'))
        .to.throw(TypeError)
        .with.property('message', 'subagent plan depth cap must be a non-negative safe integer')
    })
  }
})
