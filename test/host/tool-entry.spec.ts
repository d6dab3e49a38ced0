import { expect } from 'chai'
import type { ExecuteRequest, ToolExecution } from '../../lib/types.ts'
import { rejectionOf, scene } from '../support/scene.ts'

const objectSchema = { type: 'object' }

function tool(name: string, execute: (args: never, exec: ToolExecution) => unknown = () => `${name} ran`) {
  return { name, description: `The ${name} tool.`, parameters: objectSchema, execute }
}

describe('tools.execute: a disposed agent', () => {
  it('refuses a global tool the agent’s restriction hid, with code AGENT_DISPOSED', async () => {
    const s = await scene()
    let ran = 0
    s.root.tools.register(tool('shell', () => ++ran))
    const handle = await s.create()
    handle.agent.ctx.tools.restrict({ deny: ['shell'] })
    await handle.dispose()
    const result = await s.root.tools.execute({ name: 'shell', arguments: {}, agent: handle.agent })
    expect(result).to.deep.equal({
      isError: true,
      content: [{ type: 'text', text: `Error: agent "${handle.agent.id}" is disposed` }],
      code: 'AGENT_DISPOSED',
    })
    expect(ran).to.equal(0)
  })

  it('refuses a call for a disposed agent that never had a scope context', async () => {
    const s = await scene()
    let ran = 0
    s.root.tools.register(tool('read', () => ++ran))
    const handle = await s.create()
    await handle.dispose()
    const result = await s.root.tools.execute({ name: 'read', arguments: {}, agent: handle.agent })
    expect(result.code).to.equal('AGENT_DISPOSED')
    expect(ran).to.equal(0)
  })

  it('lets no hook or guard see a disposed agent’s call', async () => {
    const s = await scene()
    s.root.tools.register(tool('read'))
    const seen: string[] = []
    s.on('tools/pre-execute', (exec, next) => {
      seen.push(`pre ${exec.name}`)
      return next()
    })
    s.on('tools/result', (exec) => void seen.push(`result ${exec.name}`))
    const handle = await s.create()
    await handle.dispose()
    await s.root.tools.execute({ name: 'read', arguments: {}, agent: handle.agent })
    expect(seen).to.deep.equal([])
  })
})

describe('tools.execute: a malformed request', () => {
  const cases: [string, unknown, string][] = [
    ['null', null, 'tool execute request must be an object'],
    ['a string', 'read', 'tool execute request must be an object'],
    ['no name', { arguments: {} }, 'tool execute request name must be a string'],
    ['a numeric callId', { name: 'read', callId: 7 }, 'tool execute request callId must be a string'],
    ['a null agent', { name: 'read', agent: null }, 'tool execute request agent must be an agent'],
    ['a string parent', { name: 'read', parent: 'outer' }, 'tool execute request parent must be an execution token (a symbol)'],
    ['a signal that is not an AbortSignal', { name: 'read', signal: {} }, 'tool execute request signal must be an AbortSignal'],
  ]
  for (const [what, request, message] of cases) {
    it(`rejects (never throws) a request with ${what}`, async () => {
      const s = await scene()
      s.root.tools.register(tool('read'))
      let promise: Promise<unknown> | undefined
      expect(() => {
        promise = s.root.tools.execute(request as ExecuteRequest)
      }).not.to.throw()
      const error = await rejectionOf(promise!)
      expect(error).to.be.instanceOf(TypeError)
      expect(error.message).to.equal(message)
    })
  }
})

describe('tools.restrict: a malformed filter', () => {
  const cases: [string, unknown, string][] = [
    ['undefined', undefined, 'tools.restrict() filter must be an object with allow and/or deny'],
    ['null', null, 'tools.restrict() filter must be an object with allow and/or deny'],
    ['a string allow', { allow: 'read' }, 'tools.restrict() filter allow must be an array of tool names'],
    ['a numeric deny entry', { deny: [1] }, 'tools.restrict() filter deny must be an array of tool names'],
  ]
  for (const [what, filter, message] of cases) {
    it(`throws a TypeError naming the field for ${what}`, async () => {
      const s = await scene()
      s.root.tools.register(tool('read'))
      const { agent } = await s.create()
      expect(() => agent.ctx.tools.restrict(filter as { deny: string[] })).to.throw(TypeError, message)
      expect(s.root.tools.schemas(agent).map((schema) => schema.name)).to.deep.equal(['read'])
    })
  }
})

describe('tools.execute: the request is read once', () => {
  it('runs the tool whose name was checked, reading each request field once', async () => {
    const s = await scene()
    const ran: string[] = []
    s.root.tools.register(tool('read', (_args, exec) => ran.push(exec.name)))
    s.root.tools.register(tool('shell', (_args, exec) => ran.push(exec.name)))
    const reads = new Map<PropertyKey, number>()
    const request = new Proxy({ name: 'read', arguments: {}, callId: 'c1' } as ExecuteRequest, {
      get(target, key, receiver) {
        const count = (reads.get(key) ?? 0) + 1
        reads.set(key, count)
        // a name that changes after its first read must not reach another tool
        return key === 'name' && count > 1 ? 'shell' : Reflect.get(target, key, receiver)
      },
    })
    const result = await s.root.tools.execute(request)
    expect(result.isError).to.not.equal(true)
    expect(ran).to.deep.equal(['read'])
    for (const field of ['name', 'arguments', 'callId', 'agent', 'parent', 'signal']) expect([field, reads.get(field)]).to.deep.equal([field, 1])
  })

  it('rejects a request whose field getter throws, naming the field', async () => {
    const s = await scene()
    const request = { name: 'read' } as ExecuteRequest
    Object.defineProperty(request, 'arguments', {
      get: () => {
        throw new Error('gone')
      },
    })
    const error = await rejectionOf(s.root.tools.execute(request))
    expect(error).to.be.instanceOf(TypeError)
    expect(error.message).to.equal('tool execute request arguments could not be read: gone')
  })
})
