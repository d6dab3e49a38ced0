import { expect } from 'chai'
import DepthPolicy from '../../plugins/depth-policy/index.ts'
import { createDriverHost } from '../support/driver.ts'
import { rejectionOf } from '../support/scene.ts'

describe('DepthPolicy: a config update (hot reload)', () => {
  it('keeps capping a start made while the update is being applied', async () => {
    const host = await createDriverHost()
    const fiber = host.load(DepthPolicy, { maxDepth: 0 })
    await fiber
    const updating = fiber.update({ maxDepth: 0 })
    // one microtask in: a plugin restarted for the update has no listener there yet
    await Promise.resolve()
    const error = await rejectionOf(host.root.inprocessRun.spawn(host.request()))
    expect(error.message).to.equal('subagent depth 1 exceeds maxDepth 0')
    await updating
  })

  it('caps the next start with the new maxDepth', async () => {
    const host = await createDriverHost()
    const fiber = host.load(DepthPolicy, { maxDepth: 3 })
    await fiber
    await fiber.update({ maxDepth: 0 })
    const error = await rejectionOf(host.root.inprocessRun.spawn(host.request()))
    expect(error.message).to.equal('subagent depth 1 exceeds maxDepth 0')
    expect(fiber.config).to.deep.equal({ maxDepth: 0 })
  })
})
