/**
 * The current catalog of one plugin instance: read from its folders and inline entries, read again
 * on a watched change, replaced as a whole (a start reads one catalog, never half of two).
 */
import { createHash } from 'node:crypto'
import { buildCatalog, type Catalog, type DefinitionFile } from '../../lib/agent-definition/catalog.ts'
import { readDefinitionFiles } from './definition-files.ts'
import { FolderWatch } from './folder-watch.ts'

export interface DefinitionSetOptions {
  readonly debounceMs: number
  /** After a reload that changed the catalog. */
  onChange(catalog: Catalog): void
  onWatchError(error: Error, folder: string): void
}

/** A digest of what the catalog was built from: an unchanged one needs no rebuild and no event. */
function fingerprint(folders: readonly string[], inline: readonly unknown[], files: readonly DefinitionFile[]): string {
  const hash = createHash('sha1')
  hash.update(JSON.stringify([folders, inline]))
  for (const file of files) {
    hash.update(`\0${file.source}\0${file.readError ?? ''}\0${file.size ?? ''}\0`)
    if (file.bytes) hash.update(file.bytes)
  }
  return hash.digest('hex')
}

export class DefinitionSet {
  #catalog: Catalog = { definitions: [], problems: [] }
  #fingerprint = ''
  #folders: readonly string[] = []
  #inline: readonly unknown[] = []
  #watch: FolderWatch | undefined
  #closed = false

  constructor(private readonly options: DefinitionSetOptions) {}

  catalog(): Catalog {
    return this.#catalog
  }

  /** Takes a new configuration: reads everything now and (re)starts the watch. */
  load(folders: readonly string[], inline: readonly unknown[], watch: boolean, debounceMs: number): Catalog {
    this.#watch?.close()
    this.#watch = undefined
    this.#folders = folders
    this.#inline = inline
    this.reload()
    if (watch && !this.#closed) {
      this.#watch = new FolderWatch(folders, () => this.reload(), {
        debounceMs,
        onError: (error, folder) => this.options.onWatchError(error, folder),
      })
    }
    return this.#catalog
  }

  /** Reads the folders again; emits `onChange` when what was read differs from last time. */
  reload(): void {
    if (this.#closed) return
    const files = readDefinitionFiles(this.#folders)
    // folders that appeared or vanished are watched anew whether or not any definition changed
    this.#watch?.sync()
    const next = fingerprint(this.#folders, this.#inline, files)
    if (next === this.#fingerprint) return
    this.#fingerprint = next
    this.#catalog = buildCatalog(this.#inline, files)
    this.options.onChange(this.#catalog)
  }

  close(): void {
    this.#closed = true
    this.#watch?.close()
    this.#watch = undefined
  }
}
