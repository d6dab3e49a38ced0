/**
 * Hot reload through a real file watcher: every test edits files in a temporary folder and waits
 * for the loader's `reloaded` event (bounded by mocha's timeout only).
 */
import { once } from 'node:events'
import { expect } from 'chai'
import type { Loader, ReloadReport } from '../../plugins/loader/index.ts'
import { activeProbes, logged, probeSource, type Workspace, workspace } from './fixture.ts'

const twoProbes = 'plugins:\n  a: { path: ./probe.ts, config: { name: a } }\n  b: { path: ./probe.ts, config: { name: b } }\n'

async function nextReport(loader: Loader): Promise<ReloadReport> {
  const [report] = await once(loader, 'reloaded')
  return report
}

describe('Loader with watch', () => {
  let space: Workspace
  let loader: Loader

  beforeEach(async () => {
    space = workspace()
    space.write('probe.ts', probeSource('v1'))
    space.write('cordis.yml', twoProbes)
    loader = space.loader({ watch: true }).loader
    await loader.start()
  })

  afterEach(() => space.cleanup())

  it('applies a config edit to the changed entry through fiber.update', async () => {
    const fiber = loader.fiber('b')
    space.write('cordis.yml', twoProbes.replace('{ name: b }', '{ name: b, greeting: hi }'))
    const report = await nextReport(loader)
    expect([report.cause, report.updated]).to.deep.equal(['config', ['b']])
    expect(loader.fiber('b')).to.equal(fiber)
    expect(activeProbes().get('b')?.config.greeting).to.equal('hi')
  })

  it('restarts the plugin with the new code after a source edit', async () => {
    space.write('probe.ts', probeSource('v2'))
    const report = await nextReport(loader)
    expect([report.cause, report.restarted]).to.deep.equal(['source', ['a', 'b']])
    expect(activeProbes().get('a')?.version).to.equal('v2')
  })

  it('reports a rejected config edit by entry and field and keeps the old config', async () => {
    space.write('cordis.yml', twoProbes.replace('{ name: a }', '{ name: a, count: -1 }'))
    const report = await nextReport(loader)
    expect(report.failed).to.deep.equal([{ entry: 'a', message: 'plugin "a": count: expected number >= 0 but got -1' }])
    expect(activeProbes().get('a')?.config.count).to.equal(1)
  })

  it('unloads a removed entry', async () => {
    space.write('cordis.yml', 'plugins:\n  a: { path: ./probe.ts, config: { name: a } }\n')
    const report = await nextReport(loader)
    expect(report.unloaded).to.deep.equal(['b'])
    expect([...activeProbes().keys()]).to.deep.equal(['a'])
  })

  it('loads an added entry', async () => {
    space.write('cordis.yml', `${twoProbes}  c: { path: ./probe.ts, config: { name: c } }\n`)
    const report = await nextReport(loader)
    expect(report.loaded).to.deep.equal(['c'])
    expect(activeProbes().has('c')).to.equal(true)
  })

  it('picks up an atomic save of the config', async () => {
    space.writeAtomically('cordis.yml', twoProbes.replace('{ name: a }', '{ name: a, count: 5 }'))
    const report = await nextReport(loader)
    expect(report.updated).to.deep.equal(['a'])
    expect(activeProbes().get('a')?.config.count).to.equal(5)
  })

  it('keeps watching a file after an atomic save replaced it', async () => {
    space.writeAtomically('probe.ts', probeSource('v2'))
    await nextReport(loader)
    space.writeAtomically('probe.ts', probeSource('v3'))
    const report = await nextReport(loader)
    expect(report.restarted).to.deep.equal(['a', 'b'])
    expect(activeProbes().get('b')?.version).to.equal('v3')
  })

  it('reports an entry in a folder that does not exist and keeps watching the rest', async () => {
    space.write('cordis.yml', `${twoProbes}  lost: { path: ./nowhere/lost.ts }\n`)
    const report = await nextReport(loader)
    expect(report.failed.map((failure) => failure.entry)).to.deep.equal(['lost'])
    expect(logged(loader.root).at(-1)).to.match(/^cannot watch ".*nowhere": ENOENT/)
    space.write('probe.ts', probeSource('v2'))
    expect((await nextReport(loader)).restarted).to.deep.equal(['a', 'b'])
  })

  it('watches the file of an entry added by a config edit', async () => {
    space.write('extra.ts', probeSource('extra-v1'))
    space.write('cordis.yml', `${twoProbes}  x: { path: ./extra.ts, config: { name: x } }\n`)
    await nextReport(loader)
    space.write('extra.ts', probeSource('extra-v2'))
    const report = await nextReport(loader)
    expect(report.restarted).to.deep.equal(['x'])
    expect(activeProbes().get('x')?.version).to.equal('extra-v2')
  })
})
