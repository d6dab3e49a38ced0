import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { expect } from 'chai'
import { access } from 'node:fs/promises'
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

  it('records a disposal as a marker beside the file, leaves the file alone, and lists the session no more', async () => {
    const host = await createFilesHost()
    const { agent: parent } = await host.create()
    const child = await host.create({ header: { parentSession: parent.id } })
    await host.files.flush()
    const before = await host.text(child.agent.id)
    await child.dispose()
    await host.files.flush()
    expect(await exists(join(host.dir, `${child.agent.id}.disposed`))).to.equal(true)
    expect(await host.text(child.agent.id)).to.equal(before)
    expect(await host.files.children(parent.id)).to.deep.equal([])
    expect((await host.files.load(child.agent.id)).disposed).to.equal(true)
  })

  it('lifts the marker when the disposed session is resumed on purpose', async () => {
    const host = await createFilesHost()
    const { agent: parent } = await host.create()
    const child = await host.create({ header: { parentSession: parent.id } })
    const childId = child.agent.id
    await child.dispose()
    await host.files.flush()
    const resumed = await host.root.agents.resume(childId, { agentOptions: scriptedOptions })
    await host.files.flush()
    expect(await exists(join(host.dir, `${childId}.disposed`))).to.equal(false)
    expect(await host.files.children(parent.id)).to.deep.equal([childId])
    expect((await host.files.load(childId)).disposed).to.equal(undefined)
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
