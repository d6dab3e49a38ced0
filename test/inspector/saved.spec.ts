import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'chai'
import { readSavedSessions, skippedMessage, tornMessage } from '../../plugins/inspector/index.ts'

const header = (id: string, extra: Record<string, unknown> = {}) => `${JSON.stringify({ version: 1, header: { id, createdAt: 5, ...extra } })}\n`
const line = (seq: number, type: string, data: unknown) => `${JSON.stringify({ seq, type, data })}\n`

describe('readSavedSessions', () => {
  let dir: string

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'inspector-'))
  })

  afterEach(() => rm(dir, { recursive: true, force: true }))

  it('shows a child with its lineage, stop reason and usage', async () => {
    await writeFile(join(dir, 'root.jsonl'), header('root'))
    await writeFile(
      join(dir, 'kid.jsonl'),
      header('kid', { parentSession: 'root', origin: 'subagent', delegationDepth: 1, label: 'review', callId: 'call_1' }) +
        line(0, 'turn/start', { turn: 1, trigger: 'message' }) +
        line(1, 'assistant/message', { turn: 1, step: 1, content: [], usage: { inputTokens: 7, outputTokens: 2 } }) +
        line(2, 'turn/end', { turn: 1, reason: { kind: 'completed' } }),
    )
    const saved = await readSavedSessions(dir)
    expect(saved.agents().find((agent) => agent.id === 'kid')).to.deep.equal({
      id: 'kid',
      parentId: 'root',
      label: 'review',
      callId: 'call_1',
      agent: undefined,
      mode: 'spawn',
      depth: 1,
      status: 'idle',
      stopReason: 'completed',
      usage: { inputTokens: 7, outputTokens: 2 },
      startedAt: 5,
      // every view has every key (one shape); JSON leaves the undefined ones out
      endedAt: undefined,
    })
    expect(saved.problems()).to.deep.equal([])
  })

  it('shows a torn file up to its last whole line and reports the tear', async () => {
    await writeFile(join(dir, 'torn.jsonl'), `${header('torn')}${line(0, 'turn/start', { turn: 1, trigger: 'message' })}{"seq":1,"ty`)
    const saved = await readSavedSessions(dir)
    expect(saved.events('torn')).to.have.length(1)
    expect(saved.problems()).to.deep.equal([tornMessage('torn.jsonl')])
  })

  it('skips and reports foreign and malformed files without hiding the good ones', async () => {
    await writeFile(join(dir, 'good.jsonl'), header('good'))
    await writeFile(join(dir, 'foreign.jsonl'), '{"hello":"world"}\n')
    await writeFile(join(dir, 'other.jsonl'), header('somebody-else'))
    await writeFile(join(dir, 'notes.txt'), 'not a session')
    const saved = await readSavedSessions(dir)
    expect(saved.agents().map((agent) => agent.id)).to.deep.equal(['good'])
    expect(saved.problems()).to.deep.equal([
      skippedMessage('foreign.jsonl', 'session file "foreign" line 1 is not a session header'),
      skippedMessage('other.jsonl', 'session file "other" holds session "somebody-else"'),
    ])
  })
})
