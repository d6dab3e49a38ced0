import { expect } from 'chai'
import type { Events } from 'cordis'
import type { Agent, ToolDefinition, ToolExecution } from '../../lib/types.ts'
import { createDriverHost, type DriverHost } from '../support/driver.ts'
import { rejectionOf } from '../support/scene.ts'

function tool(name: string): ToolDefinition {
  return { name, description: name, parameters: { type: 'object' }, execute: () => name }
}

async function hostWithTools(...names: string[]): Promise<DriverHost> {
  const host = await createDriverHost()
  for (const name of names) host.root.tools.register(tool(name))
  return host
}

/** The `tool/result` data of `agent`'s session, in order. */
function toolResults(agent: Agent): { name: string; isError: boolean; content: unknown }[] {
  return agent.session.events
    .filter((event) => event.type === 'tool/result')
    .map((event) => {
      const { name, isError, content } = event.data as { name: string; isError: boolean; content: unknown }
      return { name, isError, content }
    })
}

const denyShell = (exec: ToolExecution) => (exec.name === 'shell' ? 'shell is not for this agent' : undefined)
const deniedShell = { name: 'shell', isError: true, content: [{ type: 'text', text: 'Error: shell is not for this agent' }] }

/** Names of the tools the child's first model request carried. */
function childTools(host: DriverHost): string[] | undefined {
  return host.scripted.requests[0]?.tools?.map((schema) => schema.name)
}

describe('InProcessRun restriction inheritance (SPEC §8.3)', () => {
  it('hides from the child a global tool its parent is denied', async () => {
    const host = await hostWithTools('read', 'shell')
    host.parent.ctx.tools.restrict({ deny: ['shell'] })
    host.scripted.push({ text: 'child' })
    const run = await host.root.inprocessRun.spawn(host.request({ inheritRestrictions: true }))
    await run.result
    expect(childTools(host)).to.deep.equal(['read'])
    expect(host.root.tools.get('shell', run.agent)).to.equal(undefined)
    await run.dispose()
  })

  it('keeps the flat scope without inheritRestrictions: the child sees the tool its parent is denied', async () => {
    const host = await hostWithTools('read', 'shell')
    host.parent.ctx.tools.restrict({ deny: ['shell'] })
    host.scripted.push({ text: 'child' })
    const run = await host.root.inprocessRun.spawn(host.request())
    await run.result
    expect(childTools(host)).to.deep.equal(['read', 'shell'])
    await run.dispose()
  })

  it('snapshots the parent tools at start: a global tool registered later stays hidden from the child', async () => {
    const host = await hostWithTools('read')
    host.scripted.push({ text: 'child' })
    const run = await host.root.inprocessRun.spawn(host.request({ inheritRestrictions: true }))
    host.root.tools.register(tool('late'))
    await run.result
    expect(host.root.tools.get('late', host.parent)?.name).to.equal('late')
    expect(host.root.tools.get('late', run.agent)).to.equal(undefined)
    await run.dispose()
  })

  it('does not widen the child when the parent loses a restriction after the start', async () => {
    const host = await hostWithTools('read', 'shell')
    const lift = host.parent.ctx.tools.restrict({ deny: ['shell'] })
    host.scripted.push('hang')
    const run = await host.root.inprocessRun.spawn(host.request({ inheritRestrictions: true }))
    lift()
    expect(host.root.tools.get('shell', host.parent)?.name).to.equal('shell')
    expect(host.root.tools.get('shell', run.agent)).to.equal(undefined)
    await run.dispose()
  })

  it('lets the tool filter narrow the inherited tools further', async () => {
    const host = await hostWithTools('read', 'write', 'shell')
    host.parent.ctx.tools.restrict({ deny: ['shell'] })
    host.scripted.push({ text: 'child' })
    const run = await host.root.inprocessRun.spawn(host.request({ inheritRestrictions: true, toolFilter: { deny: ['write'] } }))
    await run.result
    expect(childTools(host)).to.deep.equal(['read'])
    await run.dispose()
  })

  it('keeps an allow list within the parent tools as the child tools', async () => {
    const host = await hostWithTools('read', 'write', 'shell')
    host.parent.ctx.tools.restrict({ deny: ['shell'] })
    host.scripted.push({ text: 'child' })
    const run = await host.root.inprocessRun.spawn(host.request({ inheritRestrictions: true, toolFilter: { allow: ['write'] } }))
    await run.result
    expect(childTools(host)).to.deep.equal(['write'])
    await run.dispose()
  })

  it('rejects an allow list naming a tool the parent cannot see, before anything is created', async () => {
    const host = await hostWithTools('read', 'shell')
    host.parent.ctx.tools.restrict({ deny: ['shell'] })
    const base = host.snapshot()
    const starts: unknown[] = []
    const off = host.on('subagent/setup', (child) => void starts.push(child))
    const error = await rejectionOf(
      host.root.inprocessRun.spawn(host.request({ inheritRestrictions: true, toolFilter: { allow: ['read', 'shell'] } })),
    )
    off()
    expect(error).to.be.instanceOf(TypeError)
    expect(error.message).to.equal('subagent tool "shell" is not available to the parent')
    expect(starts).to.deep.equal([])
    expect(host.snapshot()).to.deep.equal(base)
  })

  it('rejects an allow list naming an unknown tool as one the parent cannot see', async () => {
    const host = await hostWithTools('read')
    const error = await rejectionOf(host.root.inprocessRun.spawn(host.request({ inheritRestrictions: true, toolFilter: { allow: ['nope'] } })))
    expect(error).to.be.instanceOf(TypeError)
    expect(error.message).to.equal('subagent tool "nope" is not available to the parent')
  })

  it('counts a global tool shadowed by a scoped one of the parent only when the parent may see the global one', async () => {
    const host = await hostWithTools('shell')
    host.parent.ctx.tools.restrict({ deny: ['shell'] })
    host.parent.ctx.tools.register({ ...tool('shell'), description: 'the parent own shell' })
    host.scripted.push({ text: 'child' })
    const run = await host.root.inprocessRun.spawn(host.request({ inheritRestrictions: true }))
    await run.result
    expect(childTools(host)).to.equal(undefined)
    await run.dispose()
  })

  it("denies the child a call its parent's own guard denies, with the guard's reason", async () => {
    const host = await hostWithTools('read', 'shell')
    host.parent.ctx.tools.guard(denyShell)
    host.scripted.push({ toolCalls: [{ name: 'shell', arguments: {} }] }, { text: 'child' })
    const run = await host.root.inprocessRun.spawn(host.request({ inheritRestrictions: true }))
    await run.result
    expect(toolResults(run.agent)).to.deep.equal([deniedShell])
    await run.dispose()
  })

  it("denies the child a call its parent's own tools/pre-execute listener denies, with the listener's reason", async () => {
    const host = await hostWithTools('read', 'shell')
    host.parent.ctx.on('tools/pre-execute', (exec, next) =>
      exec.name === 'shell' ? { kind: 'deny', reason: 'shell is not for this agent' } : next(),
    )
    host.scripted.push({ toolCalls: [{ name: 'shell', arguments: {} }] }, { text: 'child' })
    const run = await host.root.inprocessRun.spawn(host.request({ inheritRestrictions: true }))
    await run.result
    expect(toolResults(run.agent)).to.deep.equal([deniedShell])
    await run.dispose()
  })

  /** A child whose own `subagent/setup` listener denies `shell`, under a parent whose listener answers `answer`. */
  async function childDenyUnderParentAllow(answer: Events['tools/pre-execute']): Promise<unknown> {
    const host = await hostWithTools('read', 'shell')
    host.parent.ctx.on('tools/pre-execute', answer)
    const off = host.root.on('subagent/setup', (child) => {
      child.ctx.on('tools/pre-execute', (exec, next) => (exec.name === 'shell' ? { kind: 'deny', reason: 'shell is not for this agent' } : next()))
    })
    host.scripted.push({ toolCalls: [{ name: 'shell', arguments: {} }] }, { text: 'child' })
    const run = await host.root.inprocessRun.spawn(host.request({ inheritRestrictions: true }))
    await run.result
    const results = toolResults(run.agent)
    await run.dispose()
    off()
    return results
  }

  it("keeps the child's own deny when the parent's inherited listener answers allow without next()", async () => {
    const results = await childDenyUnderParentAllow((exec, next) => (exec.name === 'shell' ? { kind: 'allow' } : next()))
    expect(results).to.deep.equal([deniedShell])
  })

  it("keeps the child's own deny when the parent's inherited listener resolves to allow without next()", async () => {
    const results = await childDenyUnderParentAllow(async (exec, next) => (exec.name === 'shell' ? { kind: 'allow' } : next()))
    expect(results).to.deep.equal([deniedShell])
  })

  it("keeps the child's own deny when the parent's inherited listener calls next() and answers allow anyway", async () => {
    const results = await childDenyUnderParentAllow(async (_exec, next) => {
      await next()
      return { kind: 'allow' }
    })
    expect(results).to.deep.equal([deniedShell])
  })

  it("keeps the child's own deny when the parent's inherited listener answers nothing without next()", async () => {
    // the pipeline runs a call whose waterfall answers no deny: an answer of nothing lets it through
    const results = await childDenyUnderParentAllow(((exec: ToolExecution, next: () => unknown) =>
      exec.name === 'shell' ? undefined : next()) as unknown as Events['tools/pre-execute'])
    expect(results).to.deep.equal([deniedShell])
  })

  it("keeps the child's own deny when the parent's inherited listener resolves to an answer without a kind", async () => {
    const results = await childDenyUnderParentAllow((async (exec: ToolExecution, next: () => unknown) =>
      exec.name === 'shell' ? {} : next()) as unknown as Events['tools/pre-execute'])
    expect(results).to.deep.equal([deniedShell])
  })

  /** The child's calls of `note`, a tool its own `subagent/setup` listener gives it, under a parent that allows only `read`. */
  async function childOwnToolUnderParentAllowlist(allowOnlyRead: (host: DriverHost) => void): Promise<unknown> {
    const host = await hostWithTools('read', 'shell')
    allowOnlyRead(host)
    const off = host.root.on('subagent/setup', (child) => {
      child.ctx.tools.register(tool('note'))
    })
    host.scripted.push({ toolCalls: [{ name: 'note', arguments: {} }, { name: 'shell', arguments: {} }] }, { text: 'child' })
    const run = await host.root.inprocessRun.spawn(host.request({ inheritRestrictions: true }))
    await run.result
    const results = toolResults(run.agent)
    await run.dispose()
    off()
    return results
  }

  const onlyRead = { name: 'shell', isError: true, content: [{ type: 'text', text: 'Error: only read' }] }

  it("runs the child's own tool that its parent's inherited guard would deny, and still denies an inherited one", async () => {
    const results = await childOwnToolUnderParentAllowlist((host) => {
      host.parent.ctx.tools.guard((exec) => (exec.name === 'read' ? undefined : 'only read'))
    })
    expect(results).to.deep.equal([{ name: 'note', isError: false, content: [{ type: 'text', text: 'note' }] }, onlyRead])
  })

  it("runs the child's own tool that its parent's inherited tools/pre-execute listener would deny, and still denies an inherited one", async () => {
    const results = await childOwnToolUnderParentAllowlist((host) => {
      host.parent.ctx.on('tools/pre-execute', (exec, next) => (exec.name === 'read' ? next() : { kind: 'deny', reason: 'only read' }))
    })
    expect(results).to.deep.equal([{ name: 'note', isError: false, content: [{ type: 'text', text: 'note' }] }, onlyRead])
  })

  it("keeps the flat scope without inheritRestrictions: the parent's guard does not reach the child", async () => {
    const host = await hostWithTools('read', 'shell')
    host.parent.ctx.tools.guard(denyShell)
    host.scripted.push({ toolCalls: [{ name: 'shell', arguments: {} }] }, { text: 'child' })
    const run = await host.root.inprocessRun.spawn(host.request())
    await run.result
    expect(toolResults(run.agent)).to.deep.equal([{ name: 'shell', isError: false, content: [{ type: 'text', text: 'shell' }] }])
    await run.dispose()
  })

  it("does not widen the child when the parent's guard is lifted after the start", async () => {
    const host = await hostWithTools('shell')
    const lift = host.parent.ctx.tools.guard(denyShell)
    // lifted after the entry checks took the snapshot, before the child's first call
    host.on('subagent/setup', () => lift())
    host.scripted.push({ toolCalls: [{ name: 'shell', arguments: {} }] }, { text: 'child' })
    const run = await host.root.inprocessRun.spawn(host.request({ inheritRestrictions: true }))
    expect(host.root.tools.guardsOf(host.parent)).to.deep.equal([])
    await run.result
    expect(toolResults(run.agent)).to.deep.equal([deniedShell])
    await run.dispose()
  })

  it("passes the parent's guards on to a grandchild started with inheritRestrictions", async () => {
    const host = await hostWithTools('shell')
    host.parent.ctx.tools.guard(denyShell)
    host.scripted.push('hang')
    const child = await host.root.inprocessRun.spawn(host.request({ inheritRestrictions: true }))
    host.scripted.push({ toolCalls: [{ name: 'shell', arguments: {} }] }, { text: 'grandchild' })
    const grandchild = await host.root.inprocessRun.spawn({ ...host.request({ inheritRestrictions: true }), parent: child.agent })
    await grandchild.result
    expect(toolResults(grandchild.agent)).to.deep.equal([deniedShell])
    await grandchild.dispose()
    await child.dispose()
  })

  it('gives a child with inherited tools a scope of its own that leaves with it', async () => {
    const host = await hostWithTools('read')
    void host.parent.ctx // the child's scope lives under the parent's: count the parent's first
    const base = host.snapshot()
    host.scripted.push({ text: 'child' })
    const run = await host.root.inprocessRun.spawn(host.request({ inheritRestrictions: true }))
    await run.result
    await run.dispose()
    expect(host.snapshot()).to.deep.equal(base)
  })
})
