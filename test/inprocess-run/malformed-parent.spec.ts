import { expect } from 'chai'
import type { Agent, SubagentStartOptions, SubagentStartRequest } from '../../lib/types.ts'
import { createDriverHost, type DriverHost } from '../support/driver.ts'
import { asyncRejectionOf } from '../support/scene.ts'

/** A parent that looks like `host.parent` except for what `patch` overrides. */
function parentWith(host: DriverHost, patch: PropertyDescriptorMap): Agent {
  const { parent } = host
  const base = {
    id: parent.id,
    followup: parent.followup.bind(parent),
    options: parent.options,
    session: parent.session,
  }
  return Object.defineProperties(base, patch) as unknown as Agent
}

function throwing(message: string): PropertyDescriptor {
  return {
    get() {
      throw new Error(message)
    },
  }
}

describe('InProcessRun entry: a malformed parent or request', () => {
  it('rejects a fork whose parent session getter throws, naming the field', async () => {
    const host = await createDriverHost()
    const parent = parentWith(host, { session: throwing('session is gone') })
    const error = await asyncRejectionOf(() => host.root.inprocessRun.fork(host.request({ parent })))
    expect(error).to.be.instanceOf(TypeError)
    expect(error.message).to.equal('subagent request parent.session could not be read: session is gone')
    expect(host.root.agents.list()).to.have.length(1)
  })

  it('rejects a spawn whose parent session getter throws, naming the field', async () => {
    const host = await createDriverHost()
    const parent = parentWith(host, { session: throwing('session is gone') })
    const error = await asyncRejectionOf(() => host.root.inprocessRun.spawn(host.request({ parent })))
    expect(error.message).to.equal('subagent request parent.session could not be read: session is gone')
  })

  it('rejects a fork whose parent events contain null, naming the entry', async () => {
    const host = await createDriverHost()
    const session = { header: host.parent.session.header, events: [{ seq: 0, type: 'turn/end', data: {} }, null] }
    const parent = parentWith(host, { session: { value: session } })
    const error = await asyncRejectionOf(() => host.root.inprocessRun.fork(host.request({ parent })))
    expect(error).to.be.instanceOf(TypeError)
    expect(error.message).to.equal('subagent request parent.session.events[1] must be a session event')
    expect(host.root.agents.list()).to.have.length(1)
  })

  it('rejects a fork whose request getter for parent throws, naming the field', async () => {
    const host = await createDriverHost()
    const request = Object.defineProperty(host.request(), 'parent', throwing('no parent'))
    const error = await asyncRejectionOf(() => host.root.inprocessRun.fork(request))
    expect(error.message).to.equal('subagent request parent could not be read: no parent')
  })

  it('rejects a fork of null as a request that is not an object', async () => {
    const host = await createDriverHost()
    const error = await asyncRejectionOf(() => host.root.inprocessRun.fork(null as unknown as SubagentStartRequest))
    expect(error.message).to.equal('subagent request must be an object')
  })

  it('rejects a start whose options seed getter throws, naming the field', async () => {
    const host = await createDriverHost()
    const options = Object.defineProperty({}, 'seed', throwing('no seed')) as SubagentStartOptions
    const error = await asyncRejectionOf(() => host.root.inprocessRun.start(host.request(), options))
    expect(error.message).to.equal('subagent start options seed could not be read: no seed')
  })

  for (const field of ['id', 'followup', 'options'] as const) {
    it(`rejects a spawn whose parent ${field} getter throws, naming the field`, async () => {
      const host = await createDriverHost()
      const parent = parentWith(host, { [field]: throwing(`no ${field}`) })
      const error = await asyncRejectionOf(() => host.root.inprocessRun.spawn(host.request({ parent })))
      expect(error).to.be.instanceOf(TypeError)
      expect(error.message).to.equal(`subagent request parent.${field} could not be read: no ${field}`)
      expect(host.root.agents.list()).to.have.length(1)
    })
  }

  for (const field of ['header', 'events'] as const) {
    it(`rejects a spawn whose parent session ${field} getter throws, naming the field`, async () => {
      const host = await createDriverHost()
      const { header, events } = host.parent.session
      const session = Object.defineProperty({ header, events }, field, throwing(`no ${field}`))
      const parent = parentWith(host, { session: { value: session } })
      const error = await asyncRejectionOf(() => host.root.inprocessRun.spawn(host.request({ parent })))
      expect(error.message).to.equal(`subagent request parent.session.${field} could not be read: no ${field}`)
    })
  }

  it('rejects a parent whose header delegationDepth getter throws, naming the field', async () => {
    const host = await createDriverHost()
    const header = Object.defineProperty({ ...host.parent.session.header }, 'delegationDepth', throwing('no depth'))
    const parent = parentWith(host, { session: { value: { header, events: host.parent.session.events } } })
    const error = await asyncRejectionOf(() => host.root.inprocessRun.spawn(host.request({ parent })))
    expect(error.message).to.equal('subagent request parent.session.header.delegationDepth could not be read: no depth')
  })

  it('rejects a parent whose subagentDepth getter throws, naming the field', async () => {
    const host = await createDriverHost()
    const options = Object.defineProperty({}, 'subagentDepth', throwing('no depth'))
    const parent = parentWith(host, { options: { value: options } })
    const error = await asyncRejectionOf(() => host.root.inprocessRun.spawn(host.request({ parent })))
    expect(error.message).to.equal('subagent request parent.options.subagentDepth could not be read: no depth')
  })
})

describe('InProcessRun entry: a parent without a session header (found by the reliability suites)', () => {
  it('rejects a parent without a session header as not an agent', async () => {
    // guards against what happened without it: `Cannot read properties of undefined (reading 'delegationDepth')`
    const host = await createDriverHost()
    const request = host.request
    const fake = { id: 'fake', followup() {}, options: {}, session: { events: [] } }
    const error = await asyncRejectionOf(() => host.root.inprocessRun.spawn(request({ parent: fake as never })))
    expect(error.message).to.equal('subagent request parent must be an agent')
  })
})
