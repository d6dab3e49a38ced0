import { readFileSync } from 'node:fs'
import { expect } from 'chai'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import SubagentTool, { TOOL_DESCRIPTION, TOOL_PARAMETERS } from '../../plugins/subagent-tool/index.ts'
import { scene } from '../support/scene.ts'
import { createFixture, delegate, textOf } from './fixture.ts'

/** A scene with the driver loaded; each test loads SubagentTool itself, through `load`. */
function driverHost() {
  return scene({ plugins: [InProcessRun] })
}

describe('SubagentTool plugin', () => {
  it('shows the parent model the tool with its description and parameter schema', async () => {
    const fixture = await createFixture()
    await delegate(fixture, { prompt: 'task' }, { text: 'done' })
    expect(fixture.host.scripted.requests[0]!.tools).to.deep.equal([
      { name: 'subagent', description: TOOL_DESCRIPTION, parameters: TOOL_PARAMETERS },
    ])
  })

  it('uses the configured description instead of the default one', async () => {
    const fixture = await createFixture({ tool: { description: 'Hand a task to a helper.' } })
    expect(fixture.host.root.tools.get('subagent')?.description).to.equal('Hand a task to a helper.')
  })

  it('keeps the default description when the configured one is empty', async () => {
    const fixture = await createFixture({ tool: { description: '' } })
    expect(fixture.host.root.tools.get('subagent')?.description).to.equal(TOOL_DESCRIPTION)
  })

  it('quotes its exact description and parameter schema in the README', () => {
    const readme = readFileSync(new URL('../../plugins/subagent-tool/README.md', import.meta.url), 'utf8')
    expect(readme).to.include(`> ${TOOL_DESCRIPTION}\n`)
    const schema = /Parameters \(`TOOL_PARAMETERS`\):\n```json\n([\s\S]*?)\n```/.exec(readme)?.[1]
    expect(JSON.parse(schema ?? 'null')).to.deep.equal(TOOL_PARAMETERS)
  })

  it('removes the tool when unloaded', async () => {
    const host = await driverHost()
    const baseline = host.snapshot()
    const fiber = host.load(SubagentTool)
    await fiber
    expect(host.root.tools.get('subagent')).to.not.equal(undefined)
    await fiber.dispose()
    expect(host.root.tools.get('subagent')).to.equal(undefined)
    expect(host.snapshot()).to.deep.equal(baseline)
  })

  it('registers the tool again with the new settings on a config update', async () => {
    const host = await driverHost()
    const fiber = host.load(SubagentTool)
    await fiber
    fiber.update({ description: 'Updated description.' } as SubagentTool.Config)
    await fiber
    expect(host.root.tools.get('subagent')?.description).to.equal('Updated description.')
    await fiber.dispose()
  })

  // a restart left no subagent tool for a few microtasks, and restarted every plugin injecting subagentTool
  it('keeps the tool registered and its service in place at every turn while a config update applies', async () => {
    const host = await driverHost()
    const fiber = host.load(SubagentTool)
    await fiber
    const service = host.root.get('subagentTool')
    let applied = 0
    const dependent = host.load({ name: 'uses-subagent-tool', inject: ['subagentTool'], apply: () => void applied++ })
    await dependent
    const missing: string[] = []
    const watch = () => {
      if (!host.root.tools.get('subagent')) missing.push('tool')
      if (host.root.get('subagentTool') !== service) missing.push('service')
    }
    const updating = Promise.resolve(fiber.update({ description: 'Updated description.', maxDepth: 1 } as SubagentTool.Config))
    watch()
    for (let turn = 0; turn < 5; turn++) {
      await Promise.resolve()
      watch()
    }
    await updating
    watch()
    expect([missing, applied, host.root.tools.get('subagent')?.description]).to.deep.equal([[], 1, 'Updated description.'])
    await dependent.dispose()
    await fiber.dispose()
  })

  it('rejects a negative maxDepth in its config', async () => {
    const host = await driverHost()
    const fiber = host.load(SubagentTool, { maxDepth: -1 } as SubagentTool.Config)
    const error = await Promise.resolve(fiber).then(
      () => undefined,
      (reason: unknown) => reason,
    )
    expect(error).to.be.an('error')
    expect(host.root.tools.get('subagent')).to.equal(undefined)
  })

  it('finishes a call in flight when the plugin is unloaded during it', async () => {
    const host = await driverHost()
    const invariants = host.invariants
    const baseline = host.snapshot()
    const fiber = host.load(SubagentTool)
    await fiber
    const handle = await host.root.agents.create({ agentOptions: { provider: 'scripted', model: 'test' } })
    const parent = handle.agent
    let unloaded: Promise<void> | undefined
    let text: string | undefined
    parent.ctx.on('tools/result', (exec, result) => {
      if (exec.name === 'subagent') text = textOf(result)
    })
    host.scripted.push(
      { toolCalls: [{ name: 'subagent', arguments: { prompt: 'task' } }] },
      () => {
        unloaded = fiber.dispose()
        return { text: 'child done' }
      },
      { text: 'parent done' },
    )
    parent.followup('delegate please')
    await parent.whenIdle()
    await unloaded
    expect(text).to.equal('child done')
    expect(host.scripted.requests[2]!).to.not.have.property('tools')
    await handle.dispose()
    invariants.check()
    expect(host.snapshot()).to.deep.equal(baseline)
  })
})
