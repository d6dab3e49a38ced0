/**
 * A test scene with `SessionFiles` on a temp folder, and readers for the files it writes. The
 * scene closes it after each test (invariants and baseline checked after every passing test); the
 * folder is removed then when this host made it.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'chai'
import type { Context, Fiber } from 'cordis'
import type { Agent, SessionEvent } from '../../lib/types.ts'
import { SessionFiles } from '../../plugins/session-files/index.ts'
import { type Scene, type ScenePlugin, scene } from '../support/scene.ts'

export const scriptedOptions = { provider: 'scripted', model: 'test' }

export interface FilesHost extends Scene {
  dir: string
  files: SessionFiles
  /** The fiber of `SessionFiles`. */
  fiber: Fiber
  /** The file's text. */
  text(id: string): Promise<string>
  /** The file's lines, parsed (the empty segment after the final `\n` left out). */
  lines(id: string): Promise<unknown[]>
  /** After a flush: invariants hold, the host is back at its baseline and no writer is left. */
  expectClean(): Promise<void>
}

/**
 * A fresh temp folder, or `dir` (shared with another host: a later process on the same files);
 * `config` adds to the plugin's config; `plugins` load after it, before the baseline.
 */
export async function createFilesHost(
  dir?: string,
  config: Partial<SessionFiles.Config> = {},
  plugins: readonly ScenePlugin[] = [],
): Promise<FilesHost> {
  const owned = dir === undefined
  const folder = dir ?? (await mkdtemp(join(tmpdir(), 'session-files-')))
  const removeFolder = () => (owned ? rm(folder, { recursive: true, force: true }) : undefined)
  let host: Scene
  try {
    host = await scene({ plugins: [[SessionFiles, { ...config, dir: folder }], ...plugins] })
  } catch (error) {
    await removeFolder()
    throw error
  }
  host.defer(removeFolder)
  const files = host.root.sessionFiles
  const text = (id: string) => readFile(join(folder, `${id}.jsonl`), 'utf8')
  // the scene itself, not a copy: a test that unloads the plugin for good repoints its `baseline`
  return Object.assign(host, {
    dir: folder,
    files,
    fiber: host.fibers[0]!,
    text,
    async lines(id: string) {
      const content = await text(id)
      return content.split('\n').slice(0, -1).map((line) => JSON.parse(line))
    },
    async expectClean() {
      await files.flush()
      host.invariants.check()
      expect(host.snapshot()).to.deep.equal(host.baseline)
      expect(files.tracked()).to.deep.equal([])
    },
  })
}

/**
 * The lines a session's file should hold (format version 3): the header line, then one per event,
 * except that two or more consecutive `assistant/delta` events of one step share one run line, and
 * a message right after its step's deltas whose leading text is theirs joined leaves it out.
 */
export function expectedLines(agent: Agent): unknown[] {
  return [{ version: 3, header: { ...agent.session.header } }, ...expectedEventLines(agent.session.events)]
}

/** The lines of a disposed agent's file: `expectedLines`, then the disposal record. */
export function expectedDisposedLines(agent: Agent): unknown[] {
  return [...expectedLines(agent), { disposed: true }]
}

/** The event lines of `expectedLines`. */
export function expectedEventLines(events: readonly SessionEvent[]): unknown[] {
  const lines: unknown[] = []
  let streamed: { turn: number; step: number; text: string } | undefined
  for (let i = 0; i < events.length; ) {
    const { seq, type, data } = events[i]
    const { turn, step } = data as { turn: number; step: number }
    let end = i + 1
    if (type === 'assistant/delta') {
      const isSameStep = (event: SessionEvent) =>
        event.type === 'assistant/delta' && (event.data as { turn: number }).turn === turn && (event.data as { step: number }).step === step
      while (end < events.length && isSameStep(events[end])) end++
      const texts = events.slice(i, end).map((event) => (event.data as { text: string }).text)
      lines.push(end - i > 1 ? { seq, deltas: { turn, step, texts } } : { seq, type, data })
      streamed = { turn, step, text: texts.join('') }
      i = end
      continue
    }
    const message = data as { turn: number; step: number; content: { type: string; text?: string }[] }
    const head = type === 'assistant/message' ? message.content[0] : undefined
    if (streamed && head?.type === 'text' && head.text === streamed.text && message.turn === streamed.turn && message.step === streamed.step) {
      lines.push({ seq, type, data: { ...message, content: [{ type: 'text' }, ...message.content.slice(1)] }, streamed: true })
    } else {
      lines.push({ seq, type, data })
    }
    streamed = undefined
    i = end
  }
  return lines
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
