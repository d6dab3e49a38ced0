import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { expect } from 'chai'
import { SessionFiles } from '../../plugins/session-files/index.ts'
import { scene } from '../support/scene.ts'

describe('SessionFiles config', () => {
  let dir: string

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'session-files-'))
  })

  afterEach(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('requires dir', async () => {
    const host = await scene()
    const error = await Promise.resolve(host.load(SessionFiles, {} as SessionFiles.Config)).then(
      () => expect.fail('the plugin loaded'),
      (reason: Error) => reason,
    )
    expect(error.name).to.equal('ValidationError')
    expect(error.message).to.include('$.dir missing required value')
  })

  it('fails its load when the folder cannot be created', async () => {
    const host = await scene()
    await writeFile(join(dir, 'file'), '')
    const error = await Promise.resolve(host.load(SessionFiles, { dir: join(dir, 'file', 'sessions') })).then(
      () => expect.fail('the plugin loaded'),
      (reason: NodeJS.ErrnoException) => reason,
    )
    expect(error.code).to.equal('ENOTDIR')
  })

  it('resolves a relative dir against the working directory', async () => {
    const host = await scene()
    const target = join(dir, 'sessions')
    const fiber = host.root.plugin(SessionFiles, { dir: relative(process.cwd(), target) })
    await fiber
    expect(host.root.sessionFiles.dir).to.equal(target)
    expect(host.root.sessionFiles.pathOf('s1')).to.equal(join(target, 's1.jsonl'))
    expect((await stat(target)).isDirectory()).to.equal(true)
    await fiber.dispose()
  })
})
