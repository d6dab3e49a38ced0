import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { expect } from 'chai'
import { SessionFileError } from '../../plugins/session-files/index.ts'
import { createFilesHost, expectedLines, type FilesHost, scriptedOptions } from './fixture.ts'

const events = [
  { seq: 0, type: 'turn/start', data: { turn: 1, trigger: 'message' } },
  { seq: 1, type: 'user/message', data: { content: [{ type: 'text', text: 'hello' }], source: { kind: 'user' } } },
  { seq: 2, type: 'turn/end', data: { turn: 1, reason: { kind: 'completed' } } },
]

/** Writes `<dir>/<id>.jsonl` from raw lines, each given a `\n`, then `tail` as is. */
async function writeLines(dir: string, id: string, lines: unknown[], tail = ''): Promise<void> {
  const text = lines.map((line) => `${typeof line === 'string' ? line : JSON.stringify(line)}\n`).join('')
  await writeFile(join(dir, `${id}.jsonl`), text + tail)
}

function headerLine(id: string, fields: Record<string, unknown> = {}): unknown {
  return { version: 1, header: { id, createdAt: 1700000000000, ...fields } }
}

describe('session file validation on resume', () => {
  let host: FilesHost

  beforeEach(async () => {
    host = await createFilesHost()
  })

  async function rejection(id: string): Promise<Error> {
    return host.root.agents.resume(id, { agentOptions: scriptedOptions }).then(
      () => expect.fail('resume fulfilled'),
      (reason: Error) => reason,
    )
  }

  describe('a torn last line', () => {
    it('is dropped with a warning while the complete events are kept', async () => {
      await writeLines(host.dir, 'torn', [headerLine('torn'), ...events], '{"seq":3,"type":"step/st')
      const handle = await host.root.agents.resume('torn', { agentOptions: scriptedOptions })
      expect(handle.agent.session.events).to.deep.equal(events)
      expect(host.logged()).to.include('session file "torn" had a torn last line; kept 3 events')
      await handle.dispose()
      await host.expectClean()
    })

    it('is repaired once the resumed agent is published', async () => {
      await writeLines(host.dir, 'torn', [headerLine('torn'), ...events], '{"seq":3,"type":"step/st')
      const handle = await host.root.agents.resume('torn', { agentOptions: scriptedOptions })
      host.scripted.push({ text: 'fine' })
      handle.agent.followup('go on')
      await handle.agent.whenIdle()
      await host.files.flush()
      expect(await host.lines('torn')).to.deep.equal(expectedLines(handle.agent))
      await handle.dispose()
      await host.expectClean()
    })

    it('counts as torn even when it holds complete JSON', async () => {
      await writeLines(host.dir, 'torn', [headerLine('torn'), ...events.slice(0, 2)], JSON.stringify(events[2]))
      const stored = await host.files.load('torn')
      expect(stored.events).to.deep.equal(events.slice(0, 2))
      expect(host.logged()).to.include('session file "torn" had a torn last line; kept 2 events')
    })
  })

  const malformed: [string, Record<string, unknown>, string][] = [
    ['a negative delegationDepth', { delegationDepth: -1 }, 'session header delegationDepth must be a non-negative safe integer'],
    ['a fractional delegationDepth', { delegationDepth: 1.5 }, 'session header delegationDepth must be a non-negative safe integer'],
    ['an unsafe delegationDepth', { delegationDepth: 2 ** 53 }, 'session header delegationDepth must be a non-negative safe integer'],
    ['a string delegationDepth', { delegationDepth: '1' }, 'session header delegationDepth must be a non-negative safe integer'],
    ['a negative seedLength', { seedLength: -1 }, 'session header seedLength must be a non-negative safe integer'],
    ['a fractional seedLength', { seedLength: 0.5 }, 'session header seedLength must be a non-negative safe integer'],
    ['an agent that is not a definition name', { agent: 'Reviewer' }, 'session header agent must be a definition name matching /^[a-z][a-z0-9-]{0,63}$/'],
    [
      'an approval policy with a wrong decision word',
      { approval: { default: 'asq' } },
      'session header approval default must be "allow", "ask" or "deny" (did you mean "ask"?)',
    ],
  ]
  for (const [what, fields, message] of malformed) {
    it(`rejects a header with ${what} and leaves no trace`, async () => {
      await writeLines(host.dir, 'bad', [headerLine('bad', fields), ...events])
      expect((await rejection('bad')).message).to.equal(message)
      await host.expectClean()
    })
  }

  it('rejects -0 written as a header depth', async () => {
    await writeLines(host.dir, 'bad', ['{"version":1,"header":{"id":"bad","createdAt":1,"delegationDepth":-0}}'])
    expect((await rejection('bad')).message).to.equal('session header delegationDepth must be a non-negative safe integer')
    await host.expectClean()
  })

  const broken: [string, () => Promise<void>, string][] = [
    ['an empty file', () => writeFile(join(host.dir, 'bad.jsonl'), ''), 'session file "bad" is empty'],
    [
      'a header line without its newline',
      () => writeFile(join(host.dir, 'bad.jsonl'), JSON.stringify(headerLine('bad'))),
      'session file "bad" has a torn header line',
    ],
    ['a first line that is not JSON', () => writeLines(host.dir, 'bad', ['{"version":1,']), 'session file "bad" line 1 is not a session header'],
    ['a first line without a header', () => writeLines(host.dir, 'bad', [{ version: 1 }]), 'session file "bad" line 1 is not a session header'],
    [
      'another format version',
      () => writeLines(host.dir, 'bad', [{ version: 4, header: { id: 'bad', createdAt: 1 } }]),
      'session file "bad" has unsupported format version 4',
    ],
    [
      'the header of another session',
      () => writeLines(host.dir, 'bad', [headerLine('other')]),
      'session file "bad" holds session "other"',
    ],
    [
      'a complete line that is not an event',
      () => writeLines(host.dir, 'bad', [headerLine('bad'), events[0], '{"seq":1,"type":']),
      'session file "bad" line 3 is not a valid session event',
    ],
    [
      'an event without data',
      () => writeLines(host.dir, 'bad', [headerLine('bad'), { seq: 0, type: 'turn/start' }]),
      'session file "bad" line 2 is not a valid session event',
    ],
    [
      'a gap in seq',
      () => writeLines(host.dir, 'bad', [headerLine('bad'), events[0], events[2]]),
      'session file "bad" line 3 has seq 2, expected 1',
    ],
  ]
  for (const [what, write, message] of broken) {
    it(`rejects ${what} with SessionFileError`, async () => {
      await write()
      const error = await rejection('bad')
      expect(error).to.be.instanceOf(SessionFileError)
      expect(error.message).to.equal(message)
      await host.expectClean()
    })
  }

  it('rejects a hand-edited file whose assistant/message lost its content with INVALID_SESSION, naming the event', async () => {
    await writeLines(host.dir, 'edited', [headerLine('edited'), ...events.slice(0, 2), { seq: 2, type: 'assistant/message', data: { turn: 1, step: 1 } }])
    const error = (await rejection('edited')) as Error & { code?: string }
    expect([error.message, error.code]).to.deep.equal(['session seed event 2 "assistant/message" data.content must be an array, got undefined', 'INVALID_SESSION'])
    await host.expectClean()
  })

  it('rejects a file that cannot be read with the reason', async () => {
    await mkdir(join(host.dir, 'dir.jsonl'))
    const error = await rejection('dir')
    expect(error).to.be.instanceOf(SessionFileError)
    expect(error.message).to.match(/^session file "dir" could not be read: EISDIR/)
    await host.expectClean()
  })
})
