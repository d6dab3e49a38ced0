import { once } from 'node:events'
import { expect } from 'chai'
import { activeProbes, fiberCount, logged, probeLog, probeSource, type Workspace, workspace } from './fixture.ts'

const twoProbes = 'plugins:\n  a: { path: ./probe.ts, config: { name: a } }\n  b: { path: ./probe.ts, config: { name: b, count: 2 } }\n'

describe('Loader', () => {
  let space: Workspace

  beforeEach(() => {
    space = workspace()
    space.write('probe.ts', probeSource('v1'))
  })

  afterEach(() => space.cleanup())

  describe('start', () => {
    it('applies the entries in file order with their configs', async () => {
      space.write('cordis.yml', twoProbes)
      const { loader } = space.loader()
      const report = await loader.start()
      expect(report.loaded).to.deep.equal(['a', 'b'])
      expect(probeLog().map((record) => [record.event, record.config])).to.deep.equal([
        ['apply', { name: 'a', greeting: 'hello', count: 1 }],
        ['apply', { name: 'b', greeting: 'hello', count: 2 }],
      ])
    })

    it('reports a config the schema rejects, naming the entry and field, and loads the rest with partial', async () => {
      space.write('cordis.yml', 'plugins:\n  bad: { path: ./probe.ts, config: { name: bad, count: -1 } }\n  good: { path: ./probe.ts, config: { name: good } }\n')
      const { root, loader } = space.loader({ partial: true })
      const report = await loader.start()
      const message = 'plugin "bad": count: expected number >= 0 but got -1'
      expect(report.failed).to.deep.equal([{ entry: 'bad', message }])
      expect(logged(root)).to.deep.equal([message])
      expect([...activeProbes().keys()]).to.deep.equal(['good'])
    })

    it('reports a module that cannot be imported and loads the rest with partial', async () => {
      space.write('cordis.yml', 'plugins:\n  gone: { path: ./missing.ts }\n  a: { path: ./probe.ts, config: { name: a } }\n')
      const { loader } = space.loader({ partial: true })
      const report = await loader.start()
      expect(report.failed).to.have.length(1)
      expect(report.failed[0].message).to.match(/^plugin "gone": cannot load ".*missing\.ts": /)
      expect(report.loaded).to.deep.equal(['a'])
    })

    it('applies no entry when a later one fails its config check, and lists the valid ones as held', async () => {
      space.write('cordis.yml', 'plugins:\n  first: { path: ./probe.ts, config: { name: first } }\n  bad: { path: ./probe.ts, config: { name: bad, count: -1 } }\n')
      const { loader } = space.loader()
      const report = await loader.start()
      expect(report.failed).to.deep.equal([{ entry: 'bad', message: 'plugin "bad": count: expected number >= 0 but got -1' }])
      expect([report.loaded, report.held]).to.deep.equal([[], ['first']])
      expect(probeLog()).to.deep.equal([])
    })

    it('applies the held entries on the next reload, once the failed one is fixed', async () => {
      space.write('cordis.yml', 'plugins:\n  first: { path: ./probe.ts, config: { name: first } }\n  bad: { path: ./probe.ts, config: { name: bad, count: -1 } }\n')
      const { loader } = space.loader()
      await loader.start()
      space.write('cordis.yml', 'plugins:\n  first: { path: ./probe.ts, config: { name: first } }\n  bad: { path: ./probe.ts, config: { name: bad, count: 2 } }\n')
      const report = await loader.reload()
      expect(report.loaded).to.deep.equal(['first', 'bad'])
      expect([...activeProbes().keys()]).to.deep.equal(['first', 'bad'])
    })

    it('lists an entry waiting for a service no loaded plugin provides', async () => {
      space.write('needs.ts', 'export default function Needs() {}\nNeeds.inject = ["inprocessRun"]\n')
      space.write('cordis.yml', 'plugins:\n  needs: { path: ./needs.ts }\n')
      const { root, loader } = space.loader()
      const report = await loader.start()
      expect(report.waiting).to.deep.equal([{ entry: 'needs', services: ['inprocessRun'] }])
      expect(logged(root)).to.deep.equal(['plugin "needs": waiting for "inprocessRun", which no loaded plugin provides'])
    })

    it('reports a module without a plugin export', async () => {
      space.write('empty.ts', 'export const nothing = 1\n')
      space.write('cordis.yml', 'plugins:\n  empty: { path: ./empty.ts }\n')
      const { loader } = space.loader()
      const report = await loader.start()
      expect(report.failed[0].message).to.equal(`plugin "empty": "${space.dir}/empty.ts" has no default export that is a cordis plugin`)
    })

    it('reports a plugin whose apply throws', async () => {
      space.write('broken.ts', probeSource('v1', { throws: true }))
      space.write('cordis.yml', 'plugins:\n  broken: { path: ./broken.ts }\n')
      const { loader } = space.loader()
      const report = await loader.start()
      expect(report.failed).to.deep.equal([{ entry: 'broken', message: 'plugin "broken": failed to apply: boom' }])
    })

    it('skips a disabled entry', async () => {
      space.write('cordis.yml', 'plugins:\n  a: { path: ./probe.ts, config: { name: a }, disabled: true }\n')
      const { loader } = space.loader()
      const report = await loader.start()
      expect([report.loaded, loader.loaded(), probeLog()]).to.deep.equal([[], [], []])
    })

    it('reports an unreadable config file without an entry name', async () => {
      const { loader } = space.loader()
      const report = await loader.start()
      expect(report.failed).to.have.length(1)
      expect(report.failed[0]).not.to.have.property('entry')
      expect(report.failed[0].message).to.match(/^cannot read host config ".*cordis\.yml": ENOENT/)
    })
  })

  describe('reload', () => {
    it('updates only the entry whose config changed', async () => {
      space.write('cordis.yml', twoProbes)
      const { loader } = space.loader()
      await loader.start()
      const fiber = loader.fiber('a')
      space.write('cordis.yml', twoProbes.replace('{ name: a }', '{ name: a, greeting: hi }'))
      const report = await loader.reload()
      expect(report.updated).to.deep.equal(['a'])
      expect(loader.fiber('a')).to.equal(fiber)
      expect(activeProbes().get('a')?.config.greeting).to.equal('hi')
      expect(probeLog().filter((record) => record.config.name === 'b')).to.have.length(1)
    })

    it('keeps the old config running when the new one is rejected', async () => {
      space.write('cordis.yml', twoProbes)
      const { loader } = space.loader()
      await loader.start()
      space.write('cordis.yml', twoProbes.replace('count: 2', 'count: many'))
      const report = await loader.reload()
      expect(report.failed).to.deep.equal([{ entry: 'b', message: 'plugin "b": count: expected number but got "many"' }])
      expect(report.updated).to.deep.equal([])
      expect(activeProbes().get('b')?.config.count).to.equal(2)
    })

    it('unloads a removed entry and loads an added one', async () => {
      space.write('cordis.yml', twoProbes)
      const { loader } = space.loader()
      await loader.start()
      space.write('cordis.yml', 'plugins:\n  a: { path: ./probe.ts, config: { name: a } }\n  c: { path: ./probe.ts, config: { name: c } }\n')
      const report = await loader.reload()
      expect([report.unloaded, report.loaded]).to.deep.equal([['b'], ['c']])
      expect([...activeProbes().keys()].sort()).to.deep.equal(['a', 'c'])
    })

    it('unloads an entry that becomes disabled', async () => {
      space.write('cordis.yml', twoProbes)
      const { loader } = space.loader()
      await loader.start()
      space.write('cordis.yml', twoProbes.replace('count: 2 }', 'count: 2 }, disabled: true'))
      const report = await loader.reload()
      expect(report.unloaded).to.deep.equal(['b'])
      expect(loader.loaded()).to.deep.equal(['a'])
    })

    it('keeps everything running when the file is not valid YAML', async () => {
      space.write('cordis.yml', twoProbes)
      const { loader } = space.loader()
      await loader.start()
      space.write('cordis.yml', 'plugins:\n  a: { path: ./probe.ts\n')
      const report = await loader.reload()
      expect(report.failed).to.have.length(1)
      expect(report.unloaded).to.deep.equal([])
      expect(loader.loaded()).to.deep.equal(['a', 'b'])
    })

    it('ignores an empty file instead of unloading everything', async () => {
      space.write('cordis.yml', twoProbes)
      const { loader } = space.loader()
      await loader.start()
      space.write('cordis.yml', '')
      const report = await loader.reload()
      expect(report.failed[0].message).to.match(/is empty; ignored \(write "plugins: \{\}" to unload every plugin\)$/)
      expect(loader.loaded()).to.deep.equal(['a', 'b'])
    })

    it('keeps a running entry whose edited entry is malformed', async () => {
      space.write('cordis.yml', twoProbes)
      const { loader } = space.loader()
      await loader.start()
      space.write('cordis.yml', twoProbes.replace('{ path: ./probe.ts, config: { name: a } }', '{ path: ./probe.ts, confg: {} }'))
      const report = await loader.reload()
      expect(report.failed).to.deep.equal([{ entry: 'a', message: 'plugin "a": unknown field "confg"' }])
      expect(loader.loaded()).to.have.members(['a', 'b'])
    })

    it('restarts an entry whose path changed', async () => {
      space.write('other.ts', probeSource('other'))
      space.write('cordis.yml', twoProbes)
      const { loader } = space.loader()
      await loader.start()
      space.write('cordis.yml', twoProbes.replace('./probe.ts, config: { name: a }', './other.ts, config: { name: a }'))
      const report = await loader.reload()
      expect(report.restarted).to.deep.equal(['a'])
      expect(activeProbes().get('a')?.version).to.equal('other')
    })

    it('keeps the old plugin running when a changed path cannot be loaded', async () => {
      space.write('cordis.yml', twoProbes)
      const { loader } = space.loader()
      await loader.start()
      space.write('cordis.yml', twoProbes.replace('./probe.ts, config: { name: a }', './missing.ts, config: { name: a }'))
      const report = await loader.reload()
      expect([report.restarted, report.failed.map((failure) => failure.entry)]).to.deep.equal([[], ['a']])
      expect(activeProbes().get('a')?.version).to.equal('v1')
    })
  })

  describe('reloadSource', () => {
    it('restarts every entry of the file with the new code and the same config', async () => {
      space.write('cordis.yml', twoProbes)
      const { loader } = space.loader()
      await loader.start()
      space.write('probe.ts', probeSource('v2'))
      const report = await loader.reloadSource(`${space.dir}/probe.ts`)
      expect(report.restarted).to.deep.equal(['a', 'b'])
      const active = activeProbes()
      expect([active.get('a')?.version, active.get('b')?.version, active.get('b')?.config.count]).to.deep.equal(['v2', 'v2', 2])
    })

    it('keeps the old code running when the new file does not compile', async () => {
      space.write('cordis.yml', twoProbes)
      const { loader } = space.loader()
      await loader.start()
      space.write('probe.ts', 'export default function (ctx {\n')
      const report = await loader.reloadSource(`${space.dir}/probe.ts`)
      expect(report.failed.map((failure) => failure.entry)).to.deep.equal(['a', 'b'])
      expect(report.restarted).to.deep.equal([])
      expect(activeProbes().get('a')?.version).to.equal('v1')
    })

    it('loads an entry whose first import failed once its file is fixed', async () => {
      space.write('late.ts', 'export const notYet = 1\n')
      space.write('cordis.yml', 'plugins:\n  late: { path: ./late.ts, config: { name: late } }\n')
      const { loader } = space.loader()
      await loader.start()
      space.write('late.ts', probeSource('fixed'))
      const report = await loader.reloadSource(`${space.dir}/late.ts`)
      expect(report.loaded).to.deep.equal(['late'])
      expect(activeProbes().get('late')?.version).to.equal('fixed')
    })
  })

  describe('misuse', () => {
    it('rejects a second start and leaves the first one applied once', async () => {
      space.write('cordis.yml', twoProbes)
      const { root, loader } = space.loader()
      await loader.start()
      const error = await loader.start().then(
        () => undefined,
        (reason: Error) => reason,
      )
      expect([error?.message, (error as { code?: string } | undefined)?.code]).to.deep.equal(['loader has started already: reload() applies the config file again', 'CONFIG'])
      expect(probeLog().map((record) => record.event)).to.deep.equal(['apply', 'apply'])
      await loader.dispose()
      expect(fiberCount(root)).to.equal(0)
    })

    for (const method of ['reload', 'reloadSource'] as const) {
      it(`rejects ${method}() before start() and loads nothing`, async () => {
        space.write('cordis.yml', twoProbes)
        const { root, loader } = space.loader()
        const error = await (method === 'reload' ? loader.reload() : loader.reloadSource(space.configFile)).then(
          () => undefined,
          (reason: Error) => reason,
        )
        expect([error?.message, (error as { code?: string } | undefined)?.code]).to.deep.equal([`loader has not started: call start() before ${method}()`, 'CONFIG'])
        expect(probeLog()).to.deep.equal([])
        expect(fiberCount(root)).to.equal(0)
      })
    }
  })

  describe('dispose', () => {
    it('unloads every entry, last one first, and leaves no fiber', async () => {
      space.write('cordis.yml', twoProbes)
      const { root, loader } = space.loader()
      await loader.start()
      await loader.dispose()
      await loader.dispose()
      expect(probeLog().slice(2).map((record) => [record.event, record.config.name])).to.deep.equal([
        ['dispose', 'b'],
        ['dispose', 'a'],
      ])
      expect(fiberCount(root)).to.equal(0)
    })

    it('leaves no file watch open when it is disposed while start applies an entry', async () => {
      const gateKey = Symbol.for('subagent-inprocess.loader-test.gate')
      const gate: { entered?: () => void; opened?: Promise<void> } = {}
      const entered = new Promise<void>((resolve) => (gate.entered = resolve))
      let open = () => {}
      gate.opened = new Promise<void>((resolve) => (open = resolve))
      ;(globalThis as { [gateKey]?: typeof gate })[gateKey] = gate
      space.write(
        'slow.ts',
        `export default async function Slow() {\n  const gate = (globalThis as any)[Symbol.for('subagent-inprocess.loader-test.gate')]\n  gate.entered()\n  await gate.opened\n}\n`,
      )
      space.write('cordis.yml', 'plugins:\n  slow: { path: ./slow.ts }\n')
      await closePhase()
      const before = fileWatches()
      const { loader } = space.loader({ watch: true })
      const started = loader.start()
      await entered
      const disposed = loader.dispose()
      open()
      await Promise.all([started, disposed])
      await closePhase()
      expect(fileWatches()).to.equal(before)
    })
  })

  describe('hostConfigFile', () => {
    it('gives plugins the path of the config file from start until dispose', async () => {
      space.write('cordis.yml', 'plugins: {}\n')
      const { root, loader } = space.loader()
      await loader.start()
      expect(root.get('hostConfigFile')).to.equal(space.configFile)
      await loader.dispose()
      expect(root.get('hostConfigFile')).to.equal(undefined)
    })
  })

  describe('loader/exit', () => {
    it('re-emits the code a plugin asks to exit with', async () => {
      space.write('quit.ts', probeSource('v1', { emitExit: 3 }))
      space.write('cordis.yml', 'plugins:\n  quit: { path: ./quit.ts }\n')
      const { loader } = space.loader()
      const exit = once(loader, 'exit')
      await loader.start()
      expect(await exit).to.deep.equal([3])
    })
  })

  describe('module shapes', () => {
    // the koishi/cordis shape: the module's own exports are the plugin
    const shapedSource = `import Schema from ${JSON.stringify(import.meta.resolve('schemastery'))}
const log = (globalThis as any)[Symbol.for('subagent-inprocess.loader-test.probes')] ??= []
export const name = 'shaped'
export const Config = Schema.object({ name: Schema.string().default('shaped'), greeting: Schema.string().default('hi'), count: Schema.natural().default(1) })
export function apply(ctx: any, config: any) {
  log.push({ event: 'apply', version: 'shaped', config })
  ctx.effect(() => () => { log.push({ event: 'dispose', version: 'shaped', config }) }, 'shaped')
}
`

    it('loads a module that exports name, Config and apply, with its config checked and defaulted', async () => {
      space.write('shaped.ts', shapedSource)
      space.write('cordis.yml', 'plugins:\n  shaped: { path: ./shaped.ts, config: { count: 2 } }\n')
      const { loader } = space.loader()
      const report = await loader.start()
      expect(report.loaded).to.deep.equal(['shaped'])
      expect(probeLog()).to.deep.equal([{ event: 'apply', version: 'shaped', config: { name: 'shaped', greeting: 'hi', count: 2 } }])
    })

    it('rejects an unknown key in the config of a module-shaped plugin', async () => {
      space.write('shaped.ts', shapedSource)
      space.write('cordis.yml', 'plugins:\n  shaped: { path: ./shaped.ts, config: { Count: 2 } }\n')
      const { loader } = space.loader()
      const report = await loader.start()
      expect(report.failed).to.deep.equal([{ entry: 'shaped', message: 'plugin "shaped": unknown key "Count" (did you mean "count"?)' }])
    })

    it('honours the inject list of a module-shaped plugin', async () => {
      space.write('shaped.ts', `${shapedSource}export const inject = ['absentService']\n`)
      space.write('cordis.yml', 'plugins:\n  shaped: { path: ./shaped.ts }\n')
      const { root, loader } = space.loader()
      await loader.start()
      expect(probeLog()).to.deep.equal([])
      expect(logged(root)).to.deep.equal(['plugin "shaped": waiting for "absentService", which no loaded plugin provides'])
    })

    it('unloads a module-shaped plugin and leaves no fiber', async () => {
      space.write('shaped.ts', shapedSource)
      space.write('cordis.yml', 'plugins:\n  shaped: { path: ./shaped.ts }\n')
      const { root, loader } = space.loader()
      await loader.start()
      await loader.dispose()
      expect(probeLog().map((record) => record.event)).to.deep.equal(['apply', 'dispose'])
      expect(fiberCount(root)).to.equal(0)
    })
  })

  describe('pluginLocale', () => {
    const localeProbe = `import Schema from ${JSON.stringify(import.meta.resolve('schemastery'))}
const log = (globalThis as any)[Symbol.for('subagent-inprocess.loader-test.probes')] ??= []
export default function LocaleProbe(ctx: any, config: any) {
  log.push({ event: 'apply', version: 'locale', config })
}
LocaleProbe.Config = Schema.object({ name: Schema.string().default('probe'), locale: Schema.union(['en-US', 'zh-CN']) })
`

    it('gives every plugin that declares a locale the host default, and leaves the others alone', async () => {
      space.write('locale.ts', localeProbe)
      space.write('cordis.yml', 'plugins:\n  said: { path: ./locale.ts }\n  plain: { path: ./probe.ts, config: { name: plain } }\n')
      const { loader } = space.loader({ pluginLocale: 'zh-CN' })
      await loader.start()
      expect(probeLog().map((record) => record.config)).to.deep.equal([
        { name: 'probe', locale: 'zh-CN' },
        { name: 'plain', greeting: 'hello', count: 1 },
      ])
    })

    it("keeps an entry's own locale over the host default", async () => {
      space.write('locale.ts', localeProbe)
      space.write('cordis.yml', 'plugins:\n  said: { path: ./locale.ts, config: { locale: en-US } }\n')
      const { loader } = space.loader({ pluginLocale: 'zh-CN' })
      await loader.start()
      expect(probeLog().map((record) => record.config)).to.deep.equal([{ name: 'probe', locale: 'en-US' }])
    })

    it('keeps the host default when a config change updates the entry', async () => {
      space.write('locale.ts', localeProbe)
      space.write('cordis.yml', 'plugins:\n  said: { path: ./locale.ts }\n')
      const { loader } = space.loader({ pluginLocale: 'zh-CN' })
      await loader.start()
      space.write('cordis.yml', 'plugins:\n  said: { path: ./locale.ts, config: { name: renamed } }\n')
      const report = await loader.reload()
      expect(report.updated).to.deep.equal(['said'])
      expect(probeLog().map((record) => record.config)).to.deep.equal([
        { name: 'probe', locale: 'zh-CN' },
        { name: 'renamed', locale: 'zh-CN' },
      ])
    })
  })
})

/** Open `fs.watch` handles of the process. */
function fileWatches(): number {
  return process.getActiveResourcesInfo().filter((resource) => resource === 'FSEventWrap').length
}

/** Resolves after the event loop's next close phase: a watch closed before is gone by then. */
async function closePhase(): Promise<void> {
  await new Promise<void>((resolve) => setImmediate(resolve))
  await new Promise<void>((resolve) => setImmediate(resolve))
}
