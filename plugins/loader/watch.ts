/**
 * Watches files for content changes. It watches each file's folder rather than the file: an
 * editor's atomic save (write a temporary file, rename it over the original) replaces the inode a
 * file watch would hold, while the folder watch keeps seeing the name.
 */
import { createHash } from 'node:crypto'
import { type FSWatcher, readFileSync, watch } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { basename, dirname, resolve } from 'node:path'

export interface FileWatcherOptions {
  /** Quiet time after the last event before a file is read, in ms: one save fires several events. */
  debounceMs?: number
  /** Reports a folder that cannot be watched, or no longer can. */
  onError?(error: Error, folder: string): void
}

interface WatchedFolder {
  watcher: FSWatcher
  /** File name → absolute path, for the watched files in this folder. */
  files: Map<string, string>
}

function digest(content: Buffer): string {
  return createHash('sha1').update(content).digest('hex')
}

function readNow(path: string): Buffer | undefined {
  try {
    return readFileSync(path)
  } catch {
    return undefined
  }
}

/**
 * Calls `onChange(file)` once a watched file's content differs from what it last saw: bursts of
 * events are debounced, a save that leaves the bytes unchanged is ignored, and a file that is
 * briefly missing (mid-rename) is picked up when it reappears.
 */
export class FileWatcher {
  readonly #folders = new Map<string, WatchedFolder>()
  readonly #digests = new Map<string, string | undefined>()
  readonly #timers = new Map<string, NodeJS.Timeout>()
  readonly #debounceMs: number
  #closed = false

  constructor(
    private readonly onChange: (file: string) => void,
    private readonly options: FileWatcherOptions = {},
  ) {
    this.#debounceMs = options.debounceMs ?? 40
  }

  /**
   * Starts watching `file`. `content` is what the caller already read, so a change that lands
   * between that read and this call is still reported.
   */
  add(file: string, content?: Buffer | string): void {
    const path = resolve(file)
    if (this.#closed || this.#digests.has(path)) return
    const folderPath = dirname(path)
    let folder = this.#folders.get(folderPath)
    if (!folder) {
      let watcher: FSWatcher
      try {
        watcher = watch(folderPath, (_event, name) => this.#onEvent(folderPath, name))
      } catch (error) {
        // e.g. the folder does not exist (yet): reported, and `add` may be called again later
        this.options.onError?.(error as Error, folderPath)
        return
      }
      watcher.on('error', (error) => this.options.onError?.(error, folderPath))
      folder = { watcher, files: new Map() }
      this.#folders.set(folderPath, folder)
    }
    folder.files.set(basename(path), path)
    const known = content === undefined ? readNow(path) : Buffer.from(content)
    this.#digests.set(path, known && digest(known))
  }

  /** Stops watching `file`; its folder is released with its last file. */
  delete(file: string): void {
    const path = resolve(file)
    if (!this.#digests.delete(path)) return
    clearTimeout(this.#timers.get(path))
    this.#timers.delete(path)
    const folderPath = dirname(path)
    const folder = this.#folders.get(folderPath)
    folder?.files.delete(basename(path))
    if (folder && !folder.files.size) {
      folder.watcher.close()
      this.#folders.delete(folderPath)
    }
  }

  /** The files being watched. */
  files(): string[] {
    return [...this.#digests.keys()]
  }

  /** Stops everything; no callback runs afterwards. */
  close(): void {
    this.#closed = true
    for (const timer of this.#timers.values()) clearTimeout(timer)
    this.#timers.clear()
    for (const folder of this.#folders.values()) folder.watcher.close()
    this.#folders.clear()
    this.#digests.clear()
  }

  #onEvent(folderPath: string, name: string | Buffer | null): void {
    const folder = this.#folders.get(folderPath)
    if (!folder) return
    // some platforms omit the name: any watched file in the folder may have changed
    const paths = name === null ? [...folder.files.values()] : [folder.files.get(String(name))]
    for (const path of paths) if (path) this.#schedule(path)
  }

  #schedule(path: string): void {
    clearTimeout(this.#timers.get(path))
    this.#timers.set(
      path,
      setTimeout(() => {
        this.#timers.delete(path)
        void this.#check(path)
      }, this.#debounceMs),
    )
  }

  async #check(path: string): Promise<void> {
    const content = await this.#read(path)
    // missing (renamed away, not yet back) or no longer watched: the next event decides
    if (!content || this.#closed || !this.#digests.has(path)) return
    const next = digest(content)
    if (this.#digests.get(path) === next) return
    this.#digests.set(path, next)
    this.onChange(path)
  }

  async #read(path: string): Promise<Buffer | undefined> {
    try {
      return await readFile(path)
    } catch {
      return undefined
    }
  }
}
