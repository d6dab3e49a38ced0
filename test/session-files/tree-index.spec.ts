import { access, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { expect } from 'chai'
import { nodeFileSystem } from '../../plugins/session-files/file-system.ts'
import { createFilesHost, scriptedOptions } from './fixture.ts'

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  )

describe('SessionFiles: what a whole-tree resume asks of the folder (SPEC §14)', () => {
  it('answers session/children with the stored children of a session, oldest first', async () => {
    const host = await createFilesHost()
    const { agent: parent } = await host.create()
    const first = await host.create({ header: { parentSession: parent.id } })
    // the headers tell creation order to the millisecond (ties go by id)
    await new Promise((resolve) => setTimeout(resolve, 2))
    const second = await host.create({ header: { parentSession: parent.id } })
    await host.create({ header: { parentSession: first.agent.id } })
    expect(await host.files.children(parent.id)).to.deep.equal([first.agent.id, second.agent.id])
    expect(await host.files.children('nobody')).to.deep.equal([])
  })

  it('records a disposal as the last line of the file, no other file, and lists the session no more', async () => {
    const host = await createFilesHost()
    const { agent: parent } = await host.create()
    const child = await host.create({ header: { parentSession: parent.id } })
    await host.files.flush()
    const before = await host.text(child.agent.id)
    await child.dispose()
    await host.files.flush()
    expect(await host.text(child.agent.id)).to.equal(`${before}{"disposed":true}\n`)
    expect(await exists(join(host.dir, `${child.agent.id}.disposed`))).to.equal(false)
    expect(await host.files.children(parent.id)).to.deep.equal([])
    expect((await host.files.load(child.agent.id)).disposed).to.equal(true)
  })

  it('writes an agent created, run and disposed within one turn of the event loop as one file write', async () => {
    const host = await createFilesHost()
    const { agent: parent } = await host.create()
    await host.files.flush()
    const writes: string[] = []
    const { create, append } = nodeFileSystem
    const lineCount = (text: string | Uint8Array) => Buffer.from(text).toString().split('\n').length - 1
    nodeFileSystem.create = (path, text) => {
      writes.push(`create ${lineCount(text)}`)
      return create(path, text)
    }
    nodeFileSystem.append = (path, text) => {
      writes.push(`append ${lineCount(text)}`)
      return append(path, text)
    }
    try {
      host.scripted.push({ text: 'done' })
      const child = await host.create({ header: { parentSession: parent.id } })
      child.agent.followup('go')
      await child.agent.whenIdle()
      await child.dispose()
      await host.files.flush()
      // the header, the turn's lines and the disposal record
      const lines = await host.lines(child.agent.id)
      expect(lines.at(-1)).to.deep.equal({ disposed: true })
      expect(writes).to.deep.equal([`create ${lines.length}`])
    } finally {
      nodeFileSystem.create = create
      nodeFileSystem.append = append
    }
  })

  it('rewrites a disposed session resumed on purpose without its disposal record', async () => {
    const host = await createFilesHost()
    const { agent: parent } = await host.create()
    const child = await host.create({ header: { parentSession: parent.id } })
    const childId = child.agent.id
    await child.dispose()
    await host.files.flush()
    const resumed = await host.root.agents.resume(childId, { agentOptions: scriptedOptions })
    await host.files.flush()
    expect(await host.text(childId)).to.not.include('"disposed"')
    expect(await host.files.children(parent.id)).to.deep.equal([childId])
    expect((await host.files.load(childId)).disposed).to.equal(undefined)
    await resumed.dispose()
  })

  it('reads the disposal marker beside a file of format 2, and lifts it when the session is resumed on purpose', async () => {
    const host = await createFilesHost()
    const { agent: parent } = await host.create()
    const header = { id: 'old-child', createdAt: 1700000000000, parentSession: parent.id }
    await writeFile(join(host.dir, 'old-child.jsonl'), `${JSON.stringify({ version: 2, header })}\n`)
    await writeFile(join(host.dir, 'old-child.disposed'), '')
    expect(await host.files.children(parent.id)).to.deep.equal([])
    expect((await host.files.load('old-child')).disposed).to.equal(true)
    const resumed = await host.root.agents.resume('old-child', { agentOptions: scriptedOptions })
    await host.files.flush()
    expect(await exists(join(host.dir, 'old-child.disposed'))).to.equal(false)
    expect((await host.lines('old-child'))[0]).to.deep.equal({ version: 3, header })
    expect(await host.files.children(parent.id)).to.deep.equal(['old-child'])
    expect((await host.files.load('old-child')).disposed).to.equal(undefined)
    await resumed.dispose()
  })

  it('leaves a file without a readable header out of the listing, with a warning', async () => {
    const host = await createFilesHost()
    const { agent: parent } = await host.create()
    await writeFile(join(host.dir, 'broken.jsonl'), 'not json\n')
    expect(await host.files.children(parent.id)).to.deep.equal([])
    expect(host.logged().some((line) => line.includes('session file "broken" has no readable header and is left out of its tree'))).to.equal(true)
  })
})
