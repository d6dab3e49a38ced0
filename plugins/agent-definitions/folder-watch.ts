/**
 * Watches the definition folders for any change, debounced. A folder that does not exist yet is
 * watched through its nearest existing ancestor, so it is seen when it appears; a folder that is
 * removed (or replaced by a new one of the same name) is watched again the same way.
 */
import { type FSWatcher, statSync, watch } from 'node:fs'
import { dirname } from 'node:path'

export interface FolderWatchOptions {
  /** Quiet time after the last event before `onChange` runs, in ms: an editor's save fires several. */
  readonly debounceMs: number
  /** Reports a folder that cannot be watched. */
  onError?(error: Error, folder: string): void
}

interface Watched {
  readonly watcher: FSWatcher
  /** The inode watched: a folder removed and made again under the same name is another one. */
  readonly ino: number
}

function inodeOf(path: string): number | undefined {
  try {
    const stat = statSync(path)
    return stat.isDirectory() ? stat.ino : undefined
  } catch {
    return undefined
  }
}

/** The folder itself when it exists, else its nearest existing ancestor. */
function watchTarget(folder: string): string {
  let path = folder
  while (inodeOf(path) === undefined) {
    const parent = dirname(path)
    if (parent === path) return path
    path = parent
  }
  return path
}

/**
 * Calls `onChange()` once a burst of file-system events in or around the watched folders has been
 * quiet for `debounceMs`. `sync()` re-aims the watches after the folders changed (call it after
 * each rescan); `close()` stops everything, after which no callback runs.
 */
export class FolderWatch {
  readonly #folders: readonly string[]
  readonly #watched = new Map<string, Watched>()
  #timer: NodeJS.Timeout | undefined
  #closed = false

  constructor(
    folders: readonly string[],
    private readonly onChange: () => void,
    private readonly options: FolderWatchOptions,
  ) {
    this.#folders = folders
    this.sync()
  }

  /** Watches each folder (or its nearest existing ancestor), dropping watches no longer needed. */
  sync(): void {
    if (this.#closed) return
    const wanted = new Set(this.#folders.map(watchTarget))
    for (const [path, watched] of this.#watched) {
      if (!wanted.has(path) || inodeOf(path) !== watched.ino) {
        watched.watcher.close()
        this.#watched.delete(path)
      }
    }
    for (const path of wanted) {
      if (this.#watched.has(path)) continue
      const ino = inodeOf(path)
      if (ino === undefined) continue
      try {
        const watcher = watch(path, () => this.#schedule())
        // a watched folder removed: the watcher errors or goes quiet; the rescan re-aims it
        watcher.on('error', (error) => {
          this.options.onError?.(error, path)
          this.#schedule()
        })
        this.#watched.set(path, { watcher, ino })
      } catch (error) {
        this.options.onError?.(error as Error, path)
      }
    }
  }

  /** The paths being watched now (the folders, or the ancestors standing in for missing ones). */
  paths(): string[] {
    return [...this.#watched.keys()]
  }

  close(): void {
    this.#closed = true
    clearTimeout(this.#timer)
    for (const watched of this.#watched.values()) watched.watcher.close()
    this.#watched.clear()
  }

  #schedule(): void {
    if (this.#closed) return
    clearTimeout(this.#timer)
    this.#timer = setTimeout(() => {
      this.#timer = undefined
      if (!this.#closed) this.onChange()
    }, this.options.debounceMs)
  }
}
