/**
 * A test host with `SessionFiles` on a temp folder, the host invariants installed, and readers for
 * the files it writes.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'chai'
import type { Context, Fiber } from 'cordis'
import type { Agent, SessionEvent } from '../../lib/types.ts'
import { SessionFiles } from '../../plugins/session-files/index.ts'
import { createHost, type Snapshot, type TestHost } from '../support/harness.ts'
import { installInvariants, type Invariants } from '../support/invariants.ts'

export const scriptedOptions = { provider: 'scripted', model: 'test' }

export interface FilesHost extends TestHost {
  dir: string
  files: SessionFiles
  fiber: Fiber
  invariants: Invariants
  /** Taken after the plugin and the invariants were installed, before any agent. */
  baseline: Snapshot
  /** The file's text. */
  text(id: string): Promise<string>
  /** The file's lines, parsed (the empty segment after the final `\n` left out). */
  lines(id: string): Promise<unknown[]>
  /** After a flush: invariants hold, the host is back at its baseline and no writer is left. */
  expectClean(): Promise<void>
  /** Disposes every live agent and unloads the plugin; removes the folder if this host made it. */
  close(): Promise<void>
}

/**
 * A fresh temp folder, or `dir` (shared with another host: a later process on the same files);
 * `config` adds to the plugin's config.
 */
export async function createFilesHost(dir?: string, config: Partial<SessionFiles.Config> = {}): Promise<FilesHost> {
  const owned = dir === undefined
  const folder = dir ?? (await mkdtemp(join(tmpdir(), 'session-files-')))
  let host: TestHost
  let fiber: Fiber
  try {
    host = await createHost()
    fiber = host.root.plugin(SessionFiles, { ...config, dir: folder })
    await fiber
  } catch (error) {
    if (owned) await rm(folder, { recursive: true, force: true })
    throw error
  }
  const invariants = installInvariants(host.root)
  const baseline = host.snapshot()
  const files = host.root.sessionFiles
  const text = (id: string) => readFile(join(folder, `${id}.jsonl`), 'utf8')
  return {
    ...host,
    dir: folder,
    files,
    fiber,
    invariants,
    baseline,
    text,
    async lines(id) {
      const content = await text(id)
      return content.split('\n').slice(0, -1).map((line) => JSON.parse(line))
    },
    async expectClean() {
      await files.flush()
      invariants.check()
      expect(host.snapshot()).to.deep.equal(baseline)
      expect(files.tracked()).to.deep.equal([])
    },
    async close() {
      await host.root.agents.disposeAll()
      await fiber.dispose()
      invariants.dispose()
      if (owned) await rm(folder, { recursive: true, force: true })
    },
  }
}

/** The lines a session's file should hold: the header line, then one per event. */
export function expectedLines(agent: Agent): unknown[] {
  const events = agent.session.events.map((event: SessionEvent) => ({ seq: event.seq, type: event.type, data: event.data }))
  return [{ version: 1, header: { ...agent.session.header } }, ...events]
}

/** Resolves with the first event of `type` appended to `agent`'s session from now on. */
export function nextEvent(root: Context, agent: Agent, type: string): Promise<SessionEvent> {
  return new Promise((resolve) => {
    const dispose = root.on('session/event', (session, event) => {
      if (session !== agent.session || event.type !== type) return
      dispose()
      resolve(event)
    })
  })
}
