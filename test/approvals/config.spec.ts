import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect } from 'chai'
import type { Plugin } from 'cordis'
import Approvals from '../../plugins/approvals/index.ts'
import { rejectionOf } from '../support/scene.ts'
import { codeBlocks, readDoc } from '../docs/markdown.ts'
import { logged, workspace } from '../loader/fixture.ts'
import { approvalScene, eventsOf, scriptCalls } from './fixture.ts'

const pluginPath = new URL('../../plugins/approvals/index.ts', import.meta.url).pathname
const hostPath = new URL('../../plugins/host/index.ts', import.meta.url).pathname

describe('Approvals config (SPEC §11.1)', () => {
  it('defaults to allow everything, readOnly allow, no rules, no timeout, children route', async () => {
    const s = await approvalScene()
    expect(s.fibers[1]!.config).to.deep.equal({ default: 'allow', readOnly: 'allow', rules: [], children: 'route' })
  })

  it('rejects an unknown key with a did-you-mean and loads nothing', async () => {
    const s = await approvalScene()
    const before = s.snapshot()
    const error = await rejectionOf(Promise.resolve(s.load(Approvals as Plugin, { defualt: 'ask' })))
    expect(error.message).to.equal('Approvals config has unknown key "defualt" (did you mean "default"?)')
    expect(s.snapshot().listeners).to.equal(before.listeners)
  })

  it('rejects an unknown key in a rule with a did-you-mean', async () => {
    const s = await approvalScene()
    const error = await rejectionOf(Promise.resolve(s.load(Approvals as Plugin, { rules: [{ tool: 'x', decision: 'ask', decison: 'deny' }] })))
    expect(error.message).to.equal('Approvals config rules[0] has unknown key "decison" (did you mean "decision"?)')
  })

  it('rejects a wrong decision word naming the field', async () => {
    const s = await approvalScene()
    const error = await rejectionOf(Promise.resolve(s.load(Approvals as Plugin, { rules: [{ tool: 'x', decision: 'alow' }] })))
    expect(error.message).to.contain('rules[0].decision expected "allow" | "ask" | "deny" but got "alow"')
  })

  it('rejects a rule tool that is neither a name nor a prefix ending in *', async () => {
    const s = await approvalScene()
    const error = await rejectionOf(Promise.resolve(s.load(Approvals as Plugin, { rules: [{ tool: 'a*b', decision: 'ask' }] })))
    expect(error.message).to.equal('Approvals config rules[0] tool must be a tool name or a prefix ending in "*"')
  })

  it('refuses a malformed update and changes nothing, the fiber config included', async () => {
    const s = await approvalScene({ default: 'deny' })
    s.tool('shell')
    const { agent } = await s.create()
    const fiber = s.fibers[1]!
    const before = fiber.config
    expect(() => fiber.update({ default: 'allow', childen: 'deny' })).to.throw(
      TypeError,
      'Approvals config has unknown key "childen" (did you mean "children"?)',
    )
    expect(() => fiber.update({ default: 'alow' })).to.throw()
    expect(fiber.config).to.equal(before)
    expect((await s.root.tools.execute({ name: 'shell', arguments: {}, agent })).code).to.equal('DENIED')
  })

  it('applies an update in place to the next calls, keeping the service', async () => {
    const s = await approvalScene()
    s.tool('shell')
    const { agent } = await s.create()
    const service = s.root.approvals
    s.fibers[1]!.update({ default: 'deny' })
    expect(s.root.approvals).to.equal(service)
    expect((await s.root.tools.execute({ name: 'shell', arguments: {}, agent })).code).to.equal('DENIED')
  })

  it('decides a waiting call the updated policy allows, by policy', async () => {
    const s = await approvalScene({ default: 'ask' })
    s.tool('shell')
    const { agent } = await s.create()
    const result = s.root.tools.execute({ name: 'shell', arguments: {}, agent })
    const request = await s.nextAsked()
    s.fibers[1]!.update({ default: 'allow' })
    expect((await result).isError).to.equal(false)
    expect(eventsOf(agent, 'approval/decided')).to.deep.equal([{ requestId: request.id, approved: true, by: 'policy' }])
  })

  it('decides a waiting call the updated policy denies, by policy', async () => {
    const s = await approvalScene({ default: 'ask' })
    s.tool('shell')
    const { agent } = await s.create()
    const result = s.root.tools.execute({ name: 'shell', arguments: {}, agent })
    const request = await s.nextAsked()
    s.fibers[1]!.update({ default: 'ask', rules: [{ tool: 'shell', decision: 'deny' }] })
    expect((await result).content).to.deep.equal([{ type: 'text', text: 'Error: tool call "shell" was denied: denied by policy' }])
    expect(eventsOf(agent, 'approval/decided')).to.deep.equal([{ requestId: request.id, approved: false, reason: 'denied by policy', by: 'policy' }])
  })

  it('applies a timeout set by an update to a call already waiting', async () => {
    const s = await approvalScene({ default: 'ask' })
    s.tool('shell')
    const { agent } = await s.create()
    const result = s.root.tools.execute({ name: 'shell', arguments: {}, agent })
    await s.nextAsked()
    s.fibers[1]!.update({ default: 'ask', timeout: 5 })
    expect((await result).content).to.deep.equal([{ type: 'text', text: 'Error: tool call "shell" was denied: no decision within 5 ms' }])
  })

  it('denies a waiting child call when an update switches children to deny', async () => {
    const s = await approvalScene({ default: 'ask' })
    s.tool('shell')
    const { agent: root } = await s.create()
    scriptCalls(s, [['shell']])
    const run = await s.root.inprocessRun.spawn({ parent: root, prompt: 'go', signal: new AbortController().signal })
    await s.nextAsked()
    s.fibers[1]!.update({ default: 'ask', children: 'deny' })
    await run.result
    const decided = eventsOf(run.agent, 'approval/decided') as { reason: string; by: string }[]
    expect(decided.map(({ reason, by }) => [reason, by])).to.deep.equal([['approval is not available to a delegated subagent', 'policy']])
    await run.dispose()
    // back to route: the delegation-policy listener goes with it
    const listeners = s.snapshot().listeners
    s.fibers[1]!.update({ default: 'ask' })
    expect(s.snapshot().listeners).to.equal(listeners - 1)
  })

  it('times out an asked call by the default timeout while the config sets none', async () => {
    const s = await approvalScene({ default: 'ask' })
    s.tool('shell')
    const { agent } = await s.create()
    const result = s.root.tools.execute({ name: 'shell', arguments: {}, agent })
    await s.nextAsked()
    s.root.approvals.setDefaultTimeout(5)
    expect((await result).content).to.deep.equal([{ type: 'text', text: 'Error: tool call "shell" was denied: no decision within 5 ms' }])
    expect(() => s.root.approvals.setDefaultTimeout(0)).to.throw(TypeError, 'approvals default timeout must be a positive integer of ms')
  })

  it("leaves the config's own timeout in charge of the default timeout", async () => {
    const s = await approvalScene({ default: 'ask', timeout: 5 })
    s.tool('shell')
    const { agent } = await s.create()
    s.root.approvals.setDefaultTimeout(60_000)
    const result = await s.root.tools.execute({ name: 'shell', arguments: {}, agent })
    expect(result.content).to.deep.equal([{ type: 'text', text: 'Error: tool call "shell" was denied: no decision within 5 ms' }])
  })

  it('speaks zh-CN to the model when locale says so', async () => {
    const s = await approvalScene({ default: 'deny', locale: 'zh-CN' })
    s.tool('shell')
    const { agent } = await s.create()
    const result = await s.root.tools.execute({ name: 'shell', arguments: {}, agent })
    expect(result.content).to.deep.equal([{ type: 'text', text: 'Error: 工具调用 "shell" 被拒绝：策略拒绝' }])
  })
})

describe('Approvals hot reload (SPEC §0)', () => {
  it('refuses every waiting call when unloaded, and leaves no listener behind', async () => {
    const s = await approvalScene({ default: 'ask' })
    s.tool('shell')
    const { agent } = await s.create()
    const result = s.root.tools.execute({ name: 'shell', arguments: {}, agent })
    const request = await s.nextAsked()
    await s.fibers[1]!.dispose()
    expect((await result).content).to.deep.equal([{ type: 'text', text: 'Error: tool call "shell" was denied: the approvals plugin was unloaded' }])
    expect(eventsOf(agent, 'approval/decided')).to.deep.equal([
      { requestId: request.id, approved: false, reason: 'the approvals plugin was unloaded', by: 'cancel' },
    ])
    s.baseline = { ...s.snapshots[1]!, listeners: s.snapshots[1]!.listeners + s.baseline.listeners - s.snapshots[2]!.listeners }
    expect(s.root.approvals).to.equal(undefined)
    // without the plugin the call runs: Approvals is optional
    expect((await s.root.tools.execute({ name: 'shell', arguments: {}, agent })).isError).to.equal(false)
  })

  it('judges again after a reload with the new config', async () => {
    const s = await approvalScene({ default: 'deny' })
    s.tool('shell')
    const { agent } = await s.create()
    await s.fibers[1]!.dispose()
    const fiber = s.load(Approvals as Plugin, { default: 'allow', rules: [{ tool: 'shell', decision: 'deny' }] })
    await fiber
    expect((await s.root.tools.execute({ name: 'shell', arguments: {}, agent })).code).to.equal('DENIED')
    await fiber.dispose()
    s.baseline = { ...s.snapshots[1]!, listeners: s.snapshots[1]!.listeners + s.baseline.listeners - s.snapshots[2]!.listeners }
  })

  it('loads from the YAML host config and reports a misspelt key there with a did-you-mean', async () => {
    const space = workspace()
    try {
      writeFileSync(
        join(space.dir, 'cordis.yml'),
        `plugins:\n  host: { path: ${JSON.stringify(hostPath)} }\n  approvals:\n    path: ${JSON.stringify(pluginPath)}\n    config: { default: ask, rules: [{ tool: 'mcp__*', decision: deny }], timeout: 60000 }\n  typo:\n    path: ${JSON.stringify(pluginPath)}\n    config: { defualt: ask }\n`,
      )
      // partial: the valid entries start beside the rejected one (a strict start would start none)
      const { root, loader } = space.loader({ partial: true })
      const report = await loader.start()
      expect(report.loaded).to.deep.equal(['host', 'approvals'])
      expect(report.failed.map((failure) => failure.entry)).to.deep.equal(['typo'])
      expect(report.failed[0]!.message).to.contain('unknown key "defualt" (did you mean "default"?)')
      expect(logged(root).join('\n')).to.contain('did you mean "default"')
      expect(root.approvals.pending()).to.deep.equal([])
    } finally {
      await space.cleanup()
    }
  })

  it('loads the policy example of its README as written and judges by it', async () => {
    const [example] = codeBlocks(readDoc('plugins/approvals/README.md'), 'yaml')
    const space = workspace()
    try {
      const text = example!.body
        .replace('plugins:\n', `plugins:\n  host: { path: ${JSON.stringify(hostPath)} }\n`)
        .replace('./plugins/approvals/index.ts', pluginPath)
      writeFileSync(join(space.dir, 'cordis.yml'), text)
      const { root, loader } = space.loader()
      const report = await loader.start()
      expect(report.loaded).to.deep.equal(['host', 'approvals'])
      const tool = (name: string) => root.tools.register({ name, description: name, parameters: { type: 'object' }, execute: () => `${name} ran` })
      for (const name of ['read_file', 'rm', 'edit']) tool(name)
      const { agent } = await root.agents.create({ agentOptions: { provider: 'none' } })
      expect((await root.tools.execute({ name: 'read_file', arguments: {}, agent })).isError).to.equal(false)
      expect((await root.tools.execute({ name: 'rm', arguments: {}, agent })).code).to.equal('DENIED')
      expect((await root.tools.execute({ name: 'edit', arguments: {}, agent })).isError).to.equal(false)
      tool('shell')
      const shell = root.tools.execute({ name: 'shell', arguments: {}, agent })
      await new Promise((resolve) => setImmediate(resolve))
      const [request] = root.approvals.pending()
      expect(request).to.deep.include({ tool: 'shell', agentId: agent.id })
      root.approvals.decide(request!.id, { approved: true })
      expect((await shell).isError).to.equal(false)
    } finally {
      await space.cleanup()
    }
  })
})
