import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { expect } from 'chai'
import type { SessionEvent } from '../../lib/types.ts'
import { SessionFiles } from '../../plugins/session-files/index.ts'
import { createFilesHost, expectedDisposedLines, expectedLines, type FilesHost, nextEvent, scriptedOptions } from './fixture.ts'

describe('SessionFiles persistence', () => {
  let host: FilesHost

  beforeEach(async () => {
    host = await createFilesHost()
  })

  it('writes the header line, then one line per event of a finished turn', async () => {
    const handle = await host.root.agents.create({ agentOptions: scriptedOptions })
    host.scripted.push({ text: 'hi there', usage: { inputTokens: 3, outputTokens: 2 } })
    handle.agent.followup('hello')
    await handle.agent.whenIdle()
    await host.files.flush()
    const text = await host.text(handle.agent.id)
    const header = handle.agent.session.header
    expect(text.split('\n')[0]).to.equal(`{"version":3,"header":${JSON.stringify(header)}}`)
    expect(text.endsWith('\n')).to.equal(true)
    expect(await host.lines(handle.agent.id)).to.deep.equal(expectedLines(handle.agent))
    await handle.dispose()
    await host.expectClean()
  })

  it('round-trips every header field and the seed events through load', async () => {
    const seed: SessionEvent[] = [
      { seq: 0, type: 'turn/start', data: { turn: 1, trigger: 'message' } },
      { seq: 1, type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } },
    ]
    const handle = await host.root.agents.create({
      agentOptions: scriptedOptions,
      header: { cwd: '/work', parentSession: 'parent-1', origin: 'subagent', delegationDepth: 3, seedLength: 2 },
      seed,
    })
    const { header, events } = handle.agent.session
    await handle.dispose()
    const stored = await host.files.load(handle.agent.id)
    expect(stored.header).to.deep.equal(header)
    expect(stored.header).to.include({ delegationDepth: 3, seedLength: 2, cwd: '/work', parentSession: 'parent-1' })
    expect(stored.events).to.deep.equal(events.map((event) => ({ ...event })))
    expect(stored.events.map((event) => event.type)).to.deep.equal(['turn/start', 'turn/end', 'session/end-seed'])
    await host.expectClean()
  })

  it('writes events appended in the setup window with the header', async () => {
    const handle = await host.root.agents.create({
      agentOptions: scriptedOptions,
      setup: (agent) => {
        agent.session.append('note/setup', { text: 'before publication' })
      },
    })
    await host.files.flush()
    expect(await host.lines(handle.agent.id)).to.deep.equal([
      { version: 3, header: { ...handle.agent.session.header } },
      { seq: 0, type: 'note/setup', data: { text: 'before publication' } },
    ])
    await handle.dispose()
    await host.expectClean()
  })

  it('appends events while the turn is still running', async () => {
    const handle = await host.root.agents.create({ agentOptions: scriptedOptions })
    const agent = handle.agent
    host.scripted.push('hang')
    const delta = nextEvent(host.root, agent, 'assistant/delta')
    agent.followup('hello')
    await delta
    await host.files.flush()
    const lines = await host.lines(agent.id)
    expect(agent.status).to.equal('running')
    expect(lines).to.deep.equal(expectedLines(agent))
    expect(lines.slice(1).map((line) => (line as SessionEvent).type)).to.deep.equal([
      'turn/start',
      'user/message',
      'step/start',
      'assistant/delta',
    ])
    await handle.dispose()
    await host.expectClean()
  })

  it('keeps the file when the agent is disposed and ends it with the disposal record', async () => {
    const handle = await host.root.agents.create({ agentOptions: scriptedOptions })
    host.scripted.push({ text: 'done' })
    handle.agent.followup('hello')
    await handle.agent.whenIdle()
    const expected = expectedDisposedLines(handle.agent)
    await handle.dispose()
    await host.files.flush()
    expect(host.root.sessions.get(handle.agent.id)).to.equal(undefined)
    expect(await host.lines(handle.agent.id)).to.deep.equal(expected)
    await host.expectClean()
  })

  it('finishes pending writes when the plugin unloads', async () => {
    const handle = await host.root.agents.create({ agentOptions: scriptedOptions })
    host.scripted.push({ text: 'done' })
    handle.agent.followup('hello')
    await handle.agent.whenIdle()
    await host.fiber.dispose()
    host.baseline = host.snapshots[0]!
    expect(await host.lines(handle.agent.id)).to.deep.equal(expectedLines(handle.agent))
    await handle.dispose()
  })

  it('adopts agents that were published before it loaded', async () => {
    await host.fiber.dispose()
    host.baseline = host.snapshots[0]!
    const handle = await host.root.agents.create({ agentOptions: scriptedOptions })
    host.scripted.push({ text: 'before' })
    handle.agent.followup('hello')
    await handle.agent.whenIdle()
    const fiber = host.root.plugin(SessionFiles, { dir: host.dir })
    await fiber
    host.scripted.push({ text: 'after' })
    handle.agent.followup('again')
    await handle.agent.whenIdle()
    await host.root.sessionFiles.flush()
    expect(await host.lines(handle.agent.id)).to.deep.equal(expectedLines(handle.agent))
    await handle.dispose()
    await fiber.dispose()
  })

  it('moves live sessions to the new folder on a config update', async () => {
    const handle = await host.root.agents.create({ agentOptions: scriptedOptions })
    host.scripted.push({ text: 'before' })
    handle.agent.followup('hello')
    await handle.agent.whenIdle()
    const dir = join(host.dir, 'moved')
    await host.fiber.update({ dir })
    await host.fiber
    host.scripted.push({ text: 'after' })
    handle.agent.followup('again')
    await handle.agent.whenIdle()
    await host.root.sessionFiles.flush()
    const lines = (await readFile(join(dir, `${handle.agent.id}.jsonl`), 'utf8')).split('\n').slice(0, -1)
    expect(lines.map((line) => JSON.parse(line))).to.deep.equal(expectedLines(handle.agent))
    expect(host.root.sessionFiles.dir).to.equal(dir)
    await handle.dispose()
  })

  // nobody listens between the old instance and the new one: the agent's last events came unheard
  it('writes the last events of an agent disposed mid-turn while the plugin restarts for a config update', async () => {
    const handle = await host.root.agents.create({ agentOptions: scriptedOptions })
    host.scripted.push('hang')
    handle.agent.followup('hello')
    await nextEvent(host.root, handle.agent, 'assistant/delta')
    const update = host.fiber.update({ dir: host.dir })
    await handle.dispose()
    await update
    await host.fiber
    await host.root.sessionFiles.flush()
    const events = handle.agent.session.events
    expect(events.at(-1)).to.deep.include({ type: 'turn/end', data: { turn: 1, reason: { kind: 'aborted', cause: { kind: 'disposed' } } } })
    // and its disposal, unheard too, is recorded by the new instance
    expect(await host.lines(handle.agent.id)).to.deep.equal(expectedDisposedLines(handle.agent))
    expect(host.root.sessionFiles.tracked()).to.deep.equal([])
    expect((await host.root.sessionFiles.load(handle.agent.id)).disposed).to.equal(true)
  })

  it('refuses to replace an existing file with a new session of the same id', async () => {
    const path = join(host.dir, 'taken.jsonl')
    await writeFile(path, 'stored history\n')
    const handle = await host.root.agents.create({ sessionId: 'taken', agentOptions: scriptedOptions })
    await host.files.flush()
    expect(await readFile(path, 'utf8')).to.equal('stored history\n')
    expect(host.logged()).to.include('session file "taken" already exists; the new session is not persisted')
    await handle.dispose()
    await host.expectClean()
  })

  it('does not persist an agent whose id is not a safe file name', async () => {
    const handle = await host.root.agents.create({ sessionId: '../escape', agentOptions: scriptedOptions })
    host.scripted.push({ text: 'done' })
    handle.agent.followup('hello')
    await handle.agent.whenIdle()
    await host.files.flush()
    expect(host.logged()).to.include('session id "../escape" is not a safe file name; the session is not persisted')
    expect(await readdir(host.dir)).to.deep.equal([])
    await stat(join(dirname(host.dir), 'escape.jsonl')).then(
      () => expect.fail('a file was written outside the folder'),
      (error: NodeJS.ErrnoException) => expect(error.code).to.equal('ENOENT'),
    )
    await handle.dispose()
    await host.expectClean()
  })

  it('reports a failed write and stops writing that session', async () => {
    const handle = await host.root.agents.create({ agentOptions: scriptedOptions })
    await host.files.flush()
    await rm(host.dir, { recursive: true })
    host.scripted.push({ text: 'done' })
    handle.agent.followup('hello')
    await handle.agent.whenIdle()
    await host.files.flush()
    const warning = host.logged().find((line) => line.startsWith(`session file "${handle.agent.id}" could not be written: `))
    expect(warning).to.match(/ENOENT/)
    expect(warning).to.match(/; later events are not persisted$/)
    expect(handle.agent.session.events.at(-1)?.type).to.equal('turn/end')
    await handle.dispose()
    await host.expectClean()
  })

  it('refuses data JSON cannot render at the append and keeps writing the later events', async () => {
    const handle = await host.root.agents.create({ agentOptions: scriptedOptions })
    handle.agent.session.append('note/ok', { n: 1 })
    expect(() => handle.agent.session.append('note/big', { n: 2n })).to.throw(
      'session event "note/big" data must be JSON data: data.n is a bigint',
    )
    handle.agent.session.append('note/after', { n: 3 })
    await host.files.flush()
    expect(await host.lines(handle.agent.id)).to.deep.equal(expectedLines(handle.agent))
    expect((await host.lines(handle.agent.id)).slice(1)).to.deep.equal([
      { seq: 0, type: 'note/ok', data: { n: 1 } },
      { seq: 1, type: 'note/after', data: { n: 3 } },
    ])
    expect(host.logged()).to.deep.equal([])
    await handle.dispose()
    await host.expectClean()
  })

  it('creates its folder when it is missing', async () => {
    await host.fiber.dispose()
    host.baseline = host.snapshots[0]!
    const dir = join(host.dir, 'nested', 'sessions')
    const fiber = host.root.plugin(SessionFiles, { dir })
    await fiber
    expect((await stat(dir)).isDirectory()).to.equal(true)
    await fiber.dispose()
  })
})
