import { expect } from 'chai'
import type { Session, SessionEvent, SessionHeader } from '../../lib/types.ts'
import { disposalLine, encodeEvent, encodeHeader, encodeRun, parseSessionFile } from '../../plugins/session-files/file-format.ts'
import type { SessionFileSystem } from '../../plugins/session-files/file-system.ts'
import { OpenFileGate } from '../../plugins/session-files/open-file-gate.ts'
import { SessionWriter } from '../../plugins/session-files/session-writer.ts'

const header: SessionHeader = Object.freeze({ id: 's1', createdAt: 5 })
const path = '/files/s1.jsonl'

function message(seq: number): SessionEvent {
  return { seq, type: 'user/message', data: { text: `m${seq}` } }
}

function delta(seq: number, text: string): SessionEvent {
  return { seq, type: 'assistant/delta', data: { turn: 1, step: 1, text } }
}

function errno(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: injected fault`), { code })
}

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/**
 * A writer over an in-memory folder. `held` keeps each file call waiting until the test lets it
 * finish, `faults` fails the next call of that kind; `calls` lists every call that reached it.
 */
function memoryWriter() {
  const files = new Map<string, string>()
  const calls: string[] = []
  const failures: string[] = []
  const releases = { count: 0 }
  const faults: Partial<Record<'append' | 'create', NodeJS.ErrnoException>> = {}
  const waiting: (() => void)[] = []
  const state = { held: false }
  const call = (kind: 'append' | 'create', text: string, effect: () => void): Promise<void> => {
    calls.push(`${kind} ${text}`)
    const finish = (): void => {
      const fault = faults[kind]
      delete faults[kind]
      if (fault) throw fault
      effect()
    }
    if (!state.held) return Promise.resolve().then(finish)
    return new Promise((resolve, reject) =>
      waiting.push(() => {
        try {
          finish()
          resolve()
        } catch (error) {
          reject(error)
        }
      }),
    )
  }
  const fs: SessionFileSystem = {
    append: (file, text) => call('append', text, () => files.set(file, (files.get(file) ?? '') + text)),
    create: (file, text) =>
      call('create', text, () => {
        if (files.has(file)) throw errno('EEXIST')
        files.set(file, text)
      }),
    rename: async (from, to) => {
      files.set(to, files.get(from) ?? '')
      files.delete(from)
    },
    remove: async (file) => void files.delete(file),
    read: async (file) => files.get(file) ?? '',
    list: async () => [],
    readHead: async () => '',
    readTail: async () => '',
    exists: async (file) => files.has(file),
  }
  const writer = new SessionWriter('s1', {
    folder: '/files/',
    ready: Promise.resolve(),
    gate: new OpenFileGate(1),
    fs,
    onFailure: (_writer, error) => failures.push((error as NodeJS.ErrnoException).code ?? String(error)),
    onRelease: () => void releases.count++,
  })
  const session = { id: 's1', header, events: [] as SessionEvent[] } as unknown as Session & { events: SessionEvent[] }
  return {
    writer,
    session,
    files,
    calls,
    failures,
    releases,
    faults,
    state,
    add(event: SessionEvent): void {
      session.events.push(event)
      writer.follow(session)
    },
    /** Waits until a file call is waiting, then lets it finish. */
    async finishNext(): Promise<void> {
      while (!waiting.length) await nextTurn()
      waiting.shift()!()
      await nextTurn()
    },
  }
}

/** A file made, then the append of `message(0)` under way (held) and `message(1)` followed meanwhile. */
async function appendUnderWay(): Promise<ReturnType<typeof memoryWriter>> {
  const target = memoryWriter()
  target.writer.start(target.session, 'create')
  await target.writer.flushed()
  target.state.held = true
  target.add(message(0))
  await nextTurn()
  target.add(message(1))
  return target
}

/** `appendUnderWay`, then the session released (disposed) and the append failing with `EIO`. */
async function releaseWaitingOnFailedAppend(): Promise<ReturnType<typeof memoryWriter>> {
  const target = await appendUnderWay()
  target.writer.release(true)
  target.faults.append = errno('EIO')
  await target.finishNext()
  target.state.held = false
  await target.writer.flushed()
  return target
}

describe('SessionWriter', () => {
  it('writes nothing more after a failed append, not even the events followed while it ran', async () => {
    const target = await appendUnderWay()
    target.faults.append = errno('EIO')
    await target.finishNext()
    target.state.held = false
    target.add(message(2))
    await target.writer.flushed()
    expect(target.files.get(path)).to.equal(encodeHeader(header))
    expect(target.calls).to.deep.equal([`create ${encodeHeader(header)}`, `append ${encodeEvent(message(0))}`])
    expect(target.failures).to.deep.equal(['EIO'])
  })

  it('makes no file, nor any later write, when its create failed while events were followed', async () => {
    const target = memoryWriter()
    target.state.held = true
    target.faults.create = errno('EACCES')
    target.writer.start(target.session, 'create')
    await nextTurn()
    target.add(message(0))
    await target.finishNext()
    target.state.held = false
    await target.writer.flushed()
    expect(target.files.has(path)).to.equal(false)
    expect(target.calls).to.deep.equal([`create ${encodeHeader(header)}`])
    expect(target.failures).to.deep.equal(['EACCES'])
  })

  it('writes none of the events a pending release waited for once a write failed, and is released', async () => {
    const target = await releaseWaitingOnFailedAppend()
    expect(target.files.get(path)).to.equal(encodeHeader(header))
    expect(target.calls).to.have.length(2)
    expect(target.failures).to.deep.equal(['EIO'])
    expect(target.releases.count).to.equal(1)
  })

  it('forgets a release that waited on a failed write, so the session resumed on the same writer is written whole', async () => {
    const target = await releaseWaitingOnFailedAppend()
    const events = [message(0), message(1)]
    const resumed = { id: 's1', header, events } as unknown as Session
    target.writer.start(resumed, 'replace')
    events.push(message(2), message(3))
    target.writer.follow(resumed)
    await target.writer.flushed()
    expect(target.files.get(path)).to.equal(encodeHeader(header) + [0, 1, 2, 3].map((seq) => encodeEvent(message(seq))).join(''))
  })

  it('keeps the file a valid session file when a resumed session\'s snapshot waits behind a write that fails', async () => {
    const target = await appendUnderWay()
    const resumed = { id: 's1', header, events: [message(0), message(1), message(2)] } as unknown as Session
    target.writer.start(resumed, 'replace')
    target.faults.append = errno('EIO')
    await target.finishNext()
    target.state.held = false
    await target.writer.flushed()
    expect(() => parseSessionFile('s1', target.files.get(path)!)).not.to.throw()
    expect(target.calls.slice(2).filter((call) => call.startsWith('append'))).to.deep.equal([])
  })

  it('touches no file while only streamed deltas were followed', async () => {
    const target = memoryWriter()
    target.writer.start(target.session, 'create')
    await target.writer.flushed()
    for (let seq = 0; seq < 20; seq++) {
      target.add(delta(seq, `t${seq}`))
      await nextTurn()
      await nextTurn()
    }
    expect(target.calls).to.have.length(1)
    target.add(message(20))
    await target.writer.flushed()
    const texts = Array.from({ length: 20 }, (_, seq) => `t${seq}`)
    expect(target.calls).to.deep.equal([`create ${encodeHeader(header)}`, `append ${encodeRun(0, 1, 1, texts)}${encodeEvent(message(20))}`])
  })

  it('writes none of the events the session gained after it went away', async () => {
    const target = memoryWriter()
    target.writer.start(target.session, 'create')
    target.add(message(0))
    target.writer.release(true)
    target.session.events.push(message(1))
    await target.writer.flushed()
    expect(target.files.get(path)).to.equal(encodeHeader(header) + encodeEvent(message(0)) + disposalLine)
  })
})
