/**
 * SPEC §2.5 through the loader: a run started before a reload of the driver's plugins finishes
 * normally after it. The child's model waits on a gate the test opens after the reload.
 */
import { fileURLToPath } from 'node:url'
import { expect } from 'chai'
import type { Agent, StreamPart } from '../../lib/types.ts'
import type { Loader } from '../../plugins/loader/index.ts'
import { fiberCount, type Workspace, workspace } from './fixture.ts'

const pluginFile = (name: string) => fileURLToPath(new URL(`../../plugins/${name}/index.ts`, import.meta.url))

function hostConfig(extra = ''): string {
  return [
    'plugins:',
    `  host: { path: ${JSON.stringify(pluginFile('host'))} }`,
    `  inprocess-run: { path: ${JSON.stringify(pluginFile('inprocess-run'))} }`,
    `  depth-policy: { path: ${JSON.stringify(pluginFile('depth-policy'))}, config: { maxDepth: 3 } }`,
    extra,
  ].join('\n')
}

describe('Loader reloads with a live run', () => {
  let space: Workspace
  let loader: Loader
  let parent: Agent
  let openGate: () => void

  beforeEach(async () => {
    space = workspace()
    space.write('cordis.yml', hostConfig())
    const made = space.loader()
    loader = made.loader
    await loader.start()
    const gate = new Promise<void>((resolve) => (openGate = resolve))
    made.root.models.register('gated', {
      async *stream(): AsyncGenerator<StreamPart> {
        await gate
        yield { type: 'text-delta', text: 'finished after the reload' }
        yield { type: 'finish', reason: 'stop' }
      },
    })
    parent = (await made.root.agents.create({ agentOptions: { provider: 'gated', model: 'test' } })).agent
  })

  afterEach(async () => {
    const root = loader.root
    await space.cleanup()
    expect(fiberCount(root)).to.equal(0)
  })

  async function expectSurvival(reload: () => Promise<unknown>): Promise<void> {
    const run = await loader.root.inprocessRun.spawn({ parent, prompt: 'wait for the gate', signal: new AbortController().signal })
    await reload()
    expect(loader.root.agents.get(run.id)).to.equal(run.agent)
    openGate()
    const result = await run.result
    expect([result.stopReason, result.output]).to.deep.equal(['completed', [{ type: 'text', text: 'finished after the reload' }]])
    await run.dispose()
    expect(loader.root.agents.list()).to.deep.equal([parent])
  }

  it('finishes a run after InProcessRun is removed from the config', async () => {
    await expectSurvival(async () => {
      space.write('cordis.yml', hostConfig().replace(/ {2}inprocess-run:.*\n/, ''))
      expect((await loader.reload()).unloaded).to.deep.equal(['inprocess-run'])
    })
  })

  it('finishes a run after InProcessRun is restarted with re-imported code', async () => {
    await expectSurvival(async () => {
      expect((await loader.reloadSource(pluginFile('inprocess-run'))).restarted).to.deep.equal(['inprocess-run'])
    })
  })

  it('finishes a run after a DepthPolicy config update', async () => {
    await expectSurvival(async () => {
      space.write('cordis.yml', hostConfig().replace('maxDepth: 3', 'maxDepth: 1'))
      expect((await loader.reload()).updated).to.deep.equal(['depth-policy'])
    })
  })
})
