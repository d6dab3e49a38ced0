import { expect } from 'chai'
import { SubagentDepthError } from '../../lib/errors.ts'
import type { SubagentStartRequest } from '../../lib/types.ts'
import { createDriverHost, type DriverHost } from '../support/driver.ts'
import { rejectionOf } from '../support/scene.ts'

/** Starts with one `subagent/prepare` listener that calls `plan.capDepth(cap)`; removes it after. */
async function startCapped(host: DriverHost, cap: unknown, extra: Partial<SubagentStartRequest> = {}): Promise<Error> {
  const off = host.on('subagent/prepare', (plan) => plan.capDepth(cap as number))
  try {
    return await rejectionOf(host.root.inprocessRun.spawn(host.request(extra)))
  } finally {
    off()
  }
}

const invalidCaps: [string, unknown][] = [
  ['-1', -1],
  ['1.5', 1.5],
  ['NaN', Number.NaN],
  ['Infinity', Number.POSITIVE_INFINITY],
  ['"2"', '2'],
]

describe('InProcessRun depth cap verb: plan.capDepth (subagent/prepare)', () => {
  for (const [label, cap] of invalidCaps) {
    it(`rejects the start when a prepare listener caps the depth at ${label}, leaving nothing behind`, async () => {
      const host = await createDriverHost()
      const base = host.snapshot()
      const error = await startCapped(host, cap)
      expect(error).to.be.instanceOf(TypeError)
      expect(error.message).to.equal('subagent plan depth cap must be a non-negative safe integer')
      expect(host.snapshot()).to.deep.equal(base)
    })
  }

  it('lowers the cap below the request maxDepth', async () => {
    const host = await createDriverHost()
    const error = await startCapped(host, 0, { maxDepth: 4 })
    expect(error).to.be.instanceOf(SubagentDepthError)
    expect(error.message).to.equal('subagent depth 1 exceeds maxDepth 0')
  })

  it('keeps the request maxDepth when a prepare listener asks for a larger cap', async () => {
    const host = await createDriverHost()
    const error = await startCapped(host, 5, { maxDepth: 0 })
    expect(error.message).to.equal('subagent depth 1 exceeds maxDepth 0')
  })

  it('keeps the lowest of several caps whatever their order', async () => {
    const host = await createDriverHost()
    const seen: number[] = []
    host.on('subagent/prepare', (plan) => {
      plan.capDepth(0)
      plan.capDepth(3)
      seen.push(plan.depthCap)
    })
    const error = await rejectionOf(host.root.inprocessRun.spawn(host.request()))
    expect(seen).to.deep.equal([0])
    expect(error.message).to.equal('subagent depth 1 exceeds maxDepth 0')
  })
})

describe('InProcessRun depth cap verb: outlook.capDepth (subagent/outlook)', () => {
  it('reports the lower cap when a listener asks for a larger one after a smaller one', async () => {
    const host = await createDriverHost()
    host.on('subagent/outlook', (outlook) => outlook.capDepth(1))
    host.on('subagent/outlook', (outlook) => outlook.capDepth(4))
    const outlook = host.root.inprocessRun.outlook(host.parent)
    expect(outlook?.depthCap).to.equal(1)
    expect(outlook?.canStart).to.equal(true)
  })

  it('logs a listener that caps the outlook at -1 and keeps the cap it had', async () => {
    const host = await createDriverHost()
    host.on('subagent/outlook', (outlook) => outlook.capDepth(-1))
    const outlook = host.root.inprocessRun.outlook(host.parent)
    expect(outlook?.depthCap).to.equal(Number.POSITIVE_INFINITY)
    expect(host.logged()).to.deep.equal([
      'a "subagent/outlook" listener failed: subagent outlook depth cap must be a non-negative safe integer',
    ])
  })
})
