import { mkdirSync, rmSync, unlinkSync } from 'node:fs'
import { join } from 'node:path'
import { expect } from 'chai'
import type { SubagentStartRequest } from '../../lib/types.ts'
import AgentDefinitions from '../../plugins/agent-definitions/index.ts'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import { rejectionOf, type Scene, scene } from '../support/scene.ts'
import { definitionText, tempFolder, writeDefinition } from './fixture.ts'

/** Resolves at the next `subagent/catalog-changed` (what the watcher's reload announces). */
function nextChange(host: Scene): Promise<void> {
  return new Promise((resolve) => {
    const off = host.root.on('subagent/catalog-changed', () => {
      off()
      resolve()
    })
  })
}

async function watchingScene(folders: string[], debounceMs = 30): Promise<{ host: Scene; request(agent: string): SubagentStartRequest }> {
  const host = await scene({ plugins: [InProcessRun, [AgentDefinitions, { dirs: folders, debounceMs }]] })
  const { agent: parent } = await host.create()
  return { host, request: (agent) => ({ parent, prompt: 'go', signal: new AbortController().signal, agent }) }
}

function withFolder(host: Scene): string {
  const folder = tempFolder()
  host.defer(() => rmSync(folder, { recursive: true, force: true }))
  return folder
}

const persona = (text: string) => definitionText({ name: 'helper', description: 'Helps.' }, text)

describe('AgentDefinitions: hot reload of a watched folder (SPEC §12)', () => {
  it('sees a file added after it loaded at the next start, without a restart', async () => {
    const folder = tempFolder()
    const { host, request } = await watchingScene([folder])
    host.defer(() => rmSync(folder, { recursive: true, force: true }))
    const changed = nextChange(host)
    writeDefinition(folder, 'helper.md', persona('Added later.'))
    await changed
    host.scripted.push({ text: 'ok' })
    const run = await host.root.inprocessRun.spawn(request('helper'))
    await run.result
    expect(host.scripted.requests[0]!.system).to.equal('Added later.')
    await run.dispose()
  })

  it('applies an edited file to the next start while a live run keeps what it started with', async () => {
    const folder = tempFolder()
    writeDefinition(folder, 'helper.md', persona('First persona.'))
    const { host, request } = await watchingScene([folder])
    host.defer(() => rmSync(folder, { recursive: true, force: true }))
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    host.root.tools.register({ name: 'wait', description: 'waits', parameters: { type: 'object' }, execute: async () => { await held; return 'waited' } })
    host.scripted.push({ toolCalls: [{ name: 'wait', arguments: '{}' }] }, { text: 'live done' })
    const live = await host.root.inprocessRun.spawn(request('helper'))
    const changed = nextChange(host)
    writeDefinition(folder, 'helper.md', persona('Second persona.'))
    await changed
    release()
    await live.result
    expect(host.scripted.requests.map((sent) => sent.system)).to.deep.equal(['First persona.', 'First persona.'])
    host.scripted.push({ text: 'next done' })
    const next = await host.root.inprocessRun.spawn(request('helper'))
    await next.result
    expect(host.scripted.requests[2]!.system).to.equal('Second persona.')
    await live.dispose()
    await next.dispose()
  })

  it('rejects the next start from a definition whose file was removed', async () => {
    const folder = tempFolder()
    const file = writeDefinition(folder, 'helper.md', persona('Soon gone.'))
    const { host, request } = await watchingScene([folder])
    host.defer(() => rmSync(folder, { recursive: true, force: true }))
    const changed = nextChange(host)
    unlinkSync(file)
    await changed
    expect((await rejectionOf(host.root.inprocessRun.spawn(request('helper')))).message).to.equal('unknown agent definition "helper"')
  })

  it('reads a burst of saves once, after it is quiet', async () => {
    const folder = tempFolder()
    const { host } = await watchingScene([folder], 80)
    host.defer(() => rmSync(folder, { recursive: true, force: true }))
    let changes = 0
    host.on('subagent/catalog-changed', () => void changes++)
    const changed = nextChange(host)
    for (let i = 0; i < 10; i++) writeDefinition(folder, 'helper.md', persona(`Save ${i}.`))
    await changed
    // a straggling event of the same burst finds the same bytes and announces nothing
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(changes).to.equal(1)
    expect(host.root.agentDefinitions.get('helper')?.persona).to.equal('Save 9.')
  })

  it('picks up a folder that appears after the plugin loaded', async () => {
    const base = tempFolder()
    const folder = join(base, 'agents')
    const { host } = await watchingScene([folder])
    host.defer(() => rmSync(base, { recursive: true, force: true }))
    expect(host.root.agentDefinitions.list()).to.deep.equal([])
    mkdirSync(folder)
    const changed = nextChange(host)
    writeDefinition(folder, 'helper.md', persona('In a new folder.'))
    await changed
    expect(host.root.agentDefinitions.get('helper')?.persona).to.equal('In a new folder.')
  })

  it('survives its folder being removed, and sees it again when it is made anew', async () => {
    const base = tempFolder()
    const folder = join(base, 'agents')
    mkdirSync(folder)
    writeDefinition(folder, 'helper.md', persona('Before.'))
    const { host } = await watchingScene([folder])
    host.defer(() => rmSync(base, { recursive: true, force: true }))
    const removed = nextChange(host)
    rmSync(folder, { recursive: true })
    await removed
    expect(host.root.agentDefinitions.list()).to.deep.equal([])
    mkdirSync(folder)
    const back = nextChange(host)
    writeDefinition(folder, 'helper.md', persona('After.'))
    await back
    expect(host.root.agentDefinitions.get('helper')?.persona).to.equal('After.')
  })
})

describe('AgentDefinitions: plugin lifecycle', () => {
  it('reads the new folders on a config update, in place', async () => {
    const { host } = await watchingScene([])
    const folder = withFolder(host)
    writeDefinition(folder, 'helper.md', persona('Configured.'))
    const fiber = host.fibers[1]!
    const changed = nextChange(host)
    fiber.update({ dirs: [folder], debounceMs: 30 })
    await changed
    expect(host.root.agentDefinitions.get('helper')?.persona).to.equal('Configured.')
  })

  it('serves no definition after an unload, and again after a reload', async () => {
    const folder = tempFolder()
    writeDefinition(folder, 'helper.md', persona('Reloaded.'))
    const host = await scene({ plugins: [InProcessRun] })
    host.defer(() => rmSync(folder, { recursive: true, force: true }))
    const { agent: parent } = await host.create()
    const request = () => ({ parent, prompt: 'go', signal: new AbortController().signal, agent: 'helper' })
    const first = host.load(AgentDefinitions, { dirs: [folder] })
    await first
    expect(host.root.inprocessRun.catalog().map((entry) => entry.name)).to.deep.equal(['helper'])
    await first.dispose()
    expect(host.root.inprocessRun.catalog()).to.deep.equal([])
    expect((await rejectionOf(host.root.inprocessRun.spawn(request()))).message).to.equal('subagent runtime does not support the "agent" capability')
    const second = host.load(AgentDefinitions, { dirs: [folder] })
    await second
    host.scripted.push({ text: 'ok' })
    const run = await host.root.inprocessRun.spawn(request())
    await run.result
    expect(host.scripted.requests[0]!.system).to.equal('Reloaded.')
    await run.dispose()
  })
})
