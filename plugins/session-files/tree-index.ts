/**
 * What a whole-tree resume asks of the folder (SPEC §14): which stored sessions are children of a
 * session (their header's `parentSession`), and which were disposed. A disposal is the file's
 * last line, the disposal record; a file of format 2 records it as an empty marker file
 * `<id>.disposed` beside `<id>.jsonl` instead, still read here and lifted by a resume.
 */
import { join } from 'node:path'
import { thrownMessage } from '../../lib/errors.ts'
import type { SessionHeader } from '../../lib/types.ts'
import { messages } from './errors.ts'
import { disposalLine, fileSuffix, isSafeSessionId, parseSessionFile } from './file-format.ts'
import type { SessionFileSystem } from './file-system.ts'
import type { OpenFileGate } from './open-file-gate.ts'

/** The format 2 marker file name suffix: `<dir>/<id>.disposed`. */
export const disposedSuffix = '.disposed'

/** A header line longer than this is not read for the listing (a header is a few hundred bytes). */
const maxHeaderBytes = 64 * 1024

/** A disposal record and the end of the line before it: what a disposed session's file ends with. */
const disposedTail = `\n${disposalLine}`

/** What the listing keeps of a header: headers never change, so each file is read once. */
interface HeaderEntry {
  parentSession: string | undefined
  createdAt: number
}

export class TreeIndex {
  readonly #headers = new Map<string, HeaderEntry | null>()

  constructor(
    private readonly dir: string,
    private readonly fs: SessionFileSystem,
    private readonly gate: OpenFileGate,
    private readonly warn: (message: string) => void,
  ) {}

  /**
   * Ids of the stored sessions, not disposed (no disposal record at the end of the file, no
   * marker beside it), whose header names `parentId` as `parentSession`, in creation order as far
   * as the headers tell it: by `createdAt` (milliseconds), then by id. A file whose header line
   * cannot be read is left out with a warning. Rejects only when the folder cannot be listed.
   */
  async children(parentId: string): Promise<string[]> {
    const names = await this.gate.run(() => this.fs.list(this.dir))
    const disposed = new Set<string>()
    const ids: string[] = []
    for (const name of names) {
      if (name.endsWith(disposedSuffix)) disposed.add(name.slice(0, -disposedSuffix.length))
      else if (name.endsWith(fileSuffix)) ids.push(name.slice(0, -fileSuffix.length))
    }
    const found: ({ id: string } & HeaderEntry)[] = []
    await Promise.all(
      ids.map(async (id) => {
        if (disposed.has(id) || !isSafeSessionId(id)) return
        const entry = await this.#header(id)
        if (entry?.parentSession === parentId && !(await this.#endsDisposed(id))) found.push({ id, ...entry })
      }),
    )
    found.sort((a, b) => a.createdAt - b.createdAt || compare(a.id, b.id))
    return found.map((entry) => entry.id)
  }

  /** Whether session `id` carries a disposal marker (format 2). */
  hasMarker(id: string): Promise<boolean> {
    return this.gate.run(() => this.fs.exists(this.#markerPath(id)))
  }

  /** Removes the format 2 disposal marker of session `id` (its agent was resumed on purpose), if any. */
  clearDisposed(id: string): Promise<void> {
    return this.gate.run(() => this.fs.remove(this.#markerPath(id)))
  }

  #markerPath(id: string): string {
    return join(this.dir, id + disposedSuffix)
  }

  /** Whether the file of session `id` ends with the disposal record; an unreadable one does not. */
  async #endsDisposed(id: string): Promise<boolean> {
    const path = join(this.dir, id + fileSuffix)
    const tail = await this.gate.run(() => this.fs.readTail(path, disposedTail.length)).catch(() => '')
    return tail === disposedTail
  }

  async #header(id: string): Promise<HeaderEntry | null> {
    const known = this.#headers.get(id)
    if (known !== undefined) return known
    let entry: HeaderEntry | null = null
    try {
      const path = join(this.dir, id + fileSuffix)
      const head = await this.gate.run(() => this.fs.readHead(path, maxHeaderBytes))
      const end = head.indexOf('\n')
      if (end >= 0) {
        const header: SessionHeader = parseSessionFile(id, head.slice(0, end + 1)).header
        entry = { parentSession: header.parentSession, createdAt: header.createdAt }
      }
    } catch (error) {
      this.warn(messages.headerUnreadable(id, thrownMessage(error)))
      return null
    }
    // a file still being created has no complete header line yet: read it again next time
    if (entry) this.#headers.set(id, entry)
    return entry
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
