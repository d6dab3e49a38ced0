import { readdir } from 'node:fs/promises'
import { expect } from 'chai'
import { SubagentError } from '../../lib/errors.ts'
import type { Agent } from '../../lib/types.ts'
import { SessionFileError } from '../../plugins/session-files/index.ts'
import { createFilesHost, expectedDisposedLines, expectedLines, type FilesHost, scriptedOptions } from './fixture.ts'

/** Runs one turn on a new agent of `host` and disposes it; returns what its file should hold. */
async function storeOneTurn(host: FilesHost): Promise<{ agent: Agent; lines: unknown[] }> {
  const handle = await host.root.agents.create({ agentOptions: scriptedOptions, header: { cwd: '/work' } })
  host.scripted.push({ text: 'hi there' })
  handle.agent.followup('hello')
  await handle.agent.whenIdle()
  const lines = expectedLines(handle.agent)
  await handle.dispose()
  await host.files.flush()
  return { agent: handle.agent, lines }
}

describe('agents.resume with SessionFiles', () => {
  let first: FilesHost
  let host: FilesHost

  beforeEach(async () => {
    first = await createFilesHost()
    host = await createFilesHost(first.dir)
  })

  it('publishes the stored agent with the same id, header and events', async () => {
    const { agent: stored } = await storeOneTurn(first)
    const handle = await host.root.agents.resume(stored.id, { agentOptions: scriptedOptions })
    expect(handle.agent.id).to.equal(stored.id)
    expect(host.root.agents.get(stored.id)).to.equal(handle.agent)
    expect(host.root.sessions.get(stored.id)).to.equal(handle.agent.session)
    expect(handle.agent.session.header).to.deep.equal(stored.session.header)
    expect(handle.agent.session.events).to.deep.equal(stored.session.events)
    await handle.dispose()
    await host.expectClean()
  })

  it('runs another turn on the resumed agent with its history and appends it to the same file', async () => {
    const { agent: stored } = await storeOneTurn(first)
    const handle = await host.root.agents.resume(stored.id, { agentOptions: scriptedOptions })
    host.scripted.push({ text: 'second answer' })
    handle.agent.followup('second question')
    await handle.agent.whenIdle()
    const messages = host.scripted.requests.at(-1)!.messages
    expect(messages.map((message) => message.content)).to.deep.equal([
      [{ type: 'text', text: 'hello' }],
      [{ type: 'text', text: 'hi there' }],
      [{ type: 'text', text: 'second question' }],
    ])
    await host.files.flush()
    expect(await host.lines(stored.id)).to.deep.equal(expectedLines(handle.agent))
    expect(handle.agent.session.events.filter((event) => event.type === 'turn/end')).to.have.length(2)
    await handle.dispose()
    await host.expectClean()
  })

  it('resumes an agent in the same process that disposed it', async () => {
    // the shared invariants flag any re-publication after agent/disposed, a resume included, so
    // this scenario checks the leaks by hand
    first.invariants.dispose()
    const baseline = first.snapshot()
    const { agent: stored } = await storeOneTurn(first)
    const handle = await first.root.agents.resume(stored.id, { agentOptions: scriptedOptions })
    first.scripted.push({ text: 'again' })
    handle.agent.followup('once more')
    await handle.agent.whenIdle()
    await handle.dispose()
    await first.files.flush()
    expect(await first.lines(stored.id)).to.deep.equal(expectedDisposedLines(handle.agent))
    expect(first.snapshot()).to.deep.equal(baseline)
    expect(first.files.tracked()).to.deep.equal([])
  })

  it('rejects a session with no file and leaves no trace', async () => {
    const error = await host.root.agents.resume('missing').then(
      () => expect.fail('resume fulfilled'),
      (reason: unknown) => reason,
    )
    expect(error).to.be.instanceOf(SessionFileError)
    expect((error as SessionFileError).message).to.equal('session file "missing" not found')
    expect((error as SessionFileError).code).to.equal('SESSION_FILE')
    expect(await readdir(host.dir)).to.deep.equal([])
    await host.expectClean()
  })

  for (const id of ['../escape', 'a/b', 'a\\b', '..', '.', 'a\u0000b', 'x'.repeat(201)]) {
    it(`rejects the unsafe id ${JSON.stringify(id.length > 20 ? `${id.slice(0, 8)}…` : id)} with a clear error`, async () => {
      const error = await host.root.agents.resume(id).then(
        () => expect.fail('resume fulfilled'),
        (reason: unknown) => reason,
      )
      expect(SubagentError.is(error)).to.equal(true)
      expect((error as SessionFileError).message).to.equal(`session id "${id}" is not a safe file name`)
      expect((error as SessionFileError).sessionId).to.equal(id)
      await host.expectClean()
    })
  }
})

describe('append validation and the session file', () => {
  let host: FilesHost

  beforeEach(async () => {
    host = await createFilesHost()
  })

  for (const [label, data] of [
    ['undefined', undefined],
    ['a Date', { when: new Date(0) }],
    ['a Map', { index: new Map([['a', 1]]) }],
    ['data nested 300 levels deep', Array.from({ length: 300 }).reduce<unknown>((inner) => [inner], 1)],
  ] as const) {
    it(`keeps the file resumable after an append of ${label} was refused`, async () => {
      const handle = await host.root.agents.create({ agentOptions: scriptedOptions })
      handle.agent.session.append('note/before', { n: 1 })
      expect(() => handle.agent.session.append('note/bad', data)).to.throw(SubagentError)
      handle.agent.session.append('note/after', { n: 2 })
      const events = handle.agent.session.events
      await handle.dispose()
      const resumed = await host.root.agents.resume(handle.agent.id, { agentOptions: scriptedOptions })
      expect(resumed.agent.session.events).to.deep.equal(events)
      await resumed.dispose()
      await host.files.flush()
      expect(host.logged()).to.deep.equal([])
      expect(host.snapshot()).to.deep.equal(host.baseline)
      expect(host.files.tracked()).to.deep.equal([])
    })
  }
})

describe('SessionFiles among several session stores', () => {
  let first: FilesHost
  let host: FilesHost

  beforeEach(async () => {
    first = await createFilesHost()
    host = await createFilesHost(first.dir)
  })

  it('lets a later store answer a session it has no file for', async () => {
    const stored = { header: { id: 'elsewhere', createdAt: 1700000000000 }, events: [] }
    const dispose = host.root.on('session/load', async (id) => (id === 'elsewhere' ? stored : undefined))
    const handle = await host.root.agents.resume('elsewhere', { agentOptions: scriptedOptions })
    await host.files.flush()
    expect(await host.lines('elsewhere')).to.deep.equal(expectedLines(handle.agent))
    await handle.dispose()
    dispose()
    await host.expectClean()
  })

  it('still rejects with its own error when no other store holds the session', async () => {
    const dispose = host.root.on('session/load', async () => undefined)
    const error = await host.root.agents.resume('missing').then(
      () => expect.fail('resume fulfilled'),
      (reason: unknown) => reason,
    )
    expect((error as SessionFileError).message).to.equal('session file "missing" not found')
    dispose()
    await host.expectClean()
  })

  it('takes back its file when an earlier store answered with the same session', async () => {
    const { agent: stored, lines } = await storeOneTurn(first)
    const session = { header: stored.session.header, events: stored.session.events }
    const dispose = host.root.on('session/load', () => session, { prepend: true })
    const handle = await host.root.agents.resume(stored.id, { agentOptions: scriptedOptions })
    host.scripted.push({ text: 'again' })
    handle.agent.followup('once more')
    await handle.agent.whenIdle()
    await host.files.flush()
    expect(await host.lines(stored.id)).to.deep.equal(expectedLines(handle.agent))
    expect((await host.lines(stored.id)).slice(0, lines.length)).to.deep.equal(lines)
    expect(host.logged()).to.deep.equal([])
    await handle.dispose()
    dispose()
    await host.expectClean()
  })

  it('keeps refusing a file that holds another state of a session with the same id', async () => {
    const { agent: stored } = await storeOneTurn(first)
    const before = await host.text(stored.id)
    const other = { header: stored.session.header, events: [{ seq: 0, type: 'note/other', data: {} }] }
    const dispose = host.root.on('session/load', () => other, { prepend: true })
    const handle = await host.root.agents.resume(stored.id, { agentOptions: scriptedOptions })
    await host.files.flush()
    expect(await host.text(stored.id)).to.equal(before)
    expect(host.logged()).to.include(`session file "${stored.id}" already exists; the new session is not persisted`)
    await handle.dispose()
    dispose()
    await host.expectClean()
  })

  it('holds no per-session state after a resume that failed once the file was read', async () => {
    const { agent: stored } = await storeOneTurn(first)
    const before = await host.text(stored.id)
    for (let attempt = 0; attempt < 3; attempt++) {
      const failed = host.root.agents.resume(stored.id, {
        agentOptions: scriptedOptions,
        setup() {
          throw new Error('setup failed')
        },
      })
      await failed.then(
        () => expect.fail('resume fulfilled'),
        (error: Error) => expect(error.message).to.equal('setup failed'),
      )
    }
    await host.files.flush()
    expect(await host.text(stored.id)).to.equal(before)
    // every table the service keeps (writers, and formerly the sessions read for a resume) is empty
    const service = host.files as unknown as Record<string, unknown>
    for (const key of Object.keys(service)) {
      const value = service[key]
      if (value instanceof Map || value instanceof Set) expect(value.size, key).to.equal(0)
    }
    await host.expectClean()
  })
})
