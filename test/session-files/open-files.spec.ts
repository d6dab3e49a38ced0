import { expect } from 'chai'
import sinon from 'sinon'
import type { AgentHandle } from '../../lib/types.ts'
import { nodeFileSystem, type SessionFileSystem } from '../../plugins/session-files/file-system.ts'
import { createFilesHost, expectedLines, type FilesHost, scriptedOptions } from './fixture.ts'

type OpeningMethod = 'append' | 'create' | 'read'
const opening: OpeningMethod[] = ['append', 'create', 'read']

function errno(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: injected fault`), { code })
}

/**
 * Wraps the methods of the file-system seam that open a descriptor: counts how many run at once,
 * and lets `fault` fail a call before it reaches the disk.
 */
function watchOpenFiles(fault: (method: OpeningMethod) => Error | undefined = () => undefined): { peak: () => number; calls: () => number } {
  let running = 0
  let peak = 0
  let calls = 0
  for (const method of opening) {
    const original = nodeFileSystem[method] as (path: string, text?: string) => Promise<unknown>
    const wrapped = async (path: string, text?: string): Promise<unknown> => {
      calls++
      const error = fault(method)
      if (error) throw error
      peak = Math.max(peak, ++running)
      try {
        return await original(path, text)
      } finally {
        running--
      }
    }
    sinon.replace(nodeFileSystem, method, wrapped as SessionFileSystem[typeof method])
  }
  return { peak: () => peak, calls: () => calls }
}

/** Creates `count` agents at once and runs one scripted turn on each, all concurrently. */
async function runTurns(host: FilesHost, count: number): Promise<AgentHandle[]> {
  host.scripted.repeat({ text: 'done' })
  const handles = await Promise.all(Array.from({ length: count }, () => host.root.agents.create({ agentOptions: scriptedOptions })))
  for (const handle of handles) handle.agent.followup('go')
  await Promise.all(handles.map((handle) => handle.agent.whenIdle()))
  host.scripted.repeat(undefined)
  await host.files.flush()
  return handles
}

describe('SessionFiles open-file bound', () => {
  let host: FilesHost | undefined

  afterEach(() => {
    sinon.restore()
    host = undefined
  })

  it('never has more than maxOpenFiles file operations open across 60 concurrently running agents', async () => {
    host = await createFilesHost(undefined, { maxOpenFiles: 4 })
    const watch = watchOpenFiles()
    const handles = await runTurns(host, 60)
    expect(watch.peak()).to.equal(4)
    for (const handle of handles) expect(await host.lines(handle.agent.id)).to.deep.equal(expectedLines(handle.agent))
    await Promise.all(handles.map((handle) => handle.dispose()))
    await host.expectClean()
  })

  it('defaults maxOpenFiles to 32', async () => {
    host = await createFilesHost()
    const watch = watchOpenFiles()
    const handles = await runTurns(host, 100)
    expect(watch.peak()).to.equal(32)
    await Promise.all(handles.map((handle) => handle.dispose()))
    await host.expectClean()
  })

  for (const code of ['EMFILE', 'ENFILE']) {
    it(`retries writes that found no descriptor free (${code}) and completes every file without a warning`, async () => {
      host = await createFilesHost(undefined, { maxOpenFiles: 8 })
      let faults = 40
      const watch = watchOpenFiles(() => (faults-- > 0 ? errno(code) : undefined))
      const handles = await runTurns(host, 30)
      expect(faults).to.be.lessThan(0)
      expect(watch.calls()).to.be.greaterThan(40)
      for (const handle of handles) expect(await host.lines(handle.agent.id)).to.deep.equal(expectedLines(handle.agent))
      expect(host.logged()).to.deep.equal([])
      await Promise.all(handles.map((handle) => handle.dispose()))
      await host.expectClean()
    })
  }

  it('retries a resume read that found no descriptor free', async () => {
    host = await createFilesHost()
    const [handle] = await runTurns(host, 1)
    const events = handle.agent.session.events
    await handle.dispose()
    let faults = 3
    watchOpenFiles((method) => (method === 'read' && faults-- > 0 ? errno('EMFILE') : undefined))
    const resumed = await host.root.agents.resume(handle.agent.id, { agentOptions: scriptedOptions })
    expect(faults).to.be.lessThan(0)
    expect(resumed.agent.session.events).to.deep.equal(events)
    await resumed.dispose()
    await host.files.flush()
  })

  it('reports a write that fails for another reason at once instead of retrying it', async () => {
    host = await createFilesHost()
    const watch = watchOpenFiles((method) => (method === 'read' ? undefined : errno('ENOSPC')))
    const handles = await runTurns(host, 2)
    // each agent's first write failed and stopped its file: nothing was retried
    expect(watch.calls()).to.equal(2)
    for (const handle of handles) {
      expect(host.logged()).to.include(
        `session file "${handle.agent.id}" could not be written: ENOSPC: injected fault; later events are not persisted`,
      )
    }
    await Promise.all(handles.map((handle) => handle.dispose()))
    await host.expectClean()
  })

  it('rejects a maxOpenFiles of 0 when the plugin loads', async () => {
    const error = await createFilesHost(undefined, { maxOpenFiles: 0 }).then(
      () => expect.fail('the plugin loaded'),
      (reason: Error) => reason,
    )
    expect(error.message).to.equal('invalid config:\n  - $.maxOpenFiles expected number >= 1 but got 0 (at maxOpenFiles)')
  })
})
