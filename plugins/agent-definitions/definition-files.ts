/**
 * Reads the definition files of the configured folders: every `*.md` regular file directly in each
 * folder, in name order. A missing folder has no files; nothing here throws.
 */
import { closeSync, fstatSync, openSync, readdirSync, readSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { DefinitionFile } from '../../lib/agent-definition/catalog.ts'
import { MAX_DEFINITION_BYTES } from '../../lib/agent-definition/front-matter.ts'

function reason(error: unknown): string {
  return (error as NodeJS.ErrnoException)?.code ?? (error instanceof Error ? error.message : String(error))
}

/**
 * Reads at most `MAX_DEFINITION_BYTES + 1` bytes of a regular file: a file that grows between the
 * stat and the read still never makes one large read. A non-regular file (a FIFO, a device) is
 * never opened for reading, so it cannot block the process.
 */
function readBounded(path: string): DefinitionFile {
  let fd: number | undefined
  try {
    const stat = statSync(path)
    if (!stat.isFile()) return { source: path, readError: 'not a regular file' }
    if (stat.size > MAX_DEFINITION_BYTES) return { source: path, size: stat.size }
    fd = openSync(path, 'r')
    const size = fstatSync(fd).size
    if (size > MAX_DEFINITION_BYTES) return { source: path, size }
    const buffer = Buffer.alloc(Math.min(size, MAX_DEFINITION_BYTES) + 1)
    let length = 0
    while (length < buffer.length) {
      const read = readSync(fd, buffer, length, buffer.length - length, null)
      if (read === 0) break
      length += read
    }
    if (length > MAX_DEFINITION_BYTES) return { source: path, size: length }
    return { source: path, bytes: buffer.subarray(0, length) }
  } catch (error) {
    return { source: path, readError: reason(error) }
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

/** The definition files of `folders` (absolute paths), folder by folder, each folder's in name order. */
export function readDefinitionFiles(folders: readonly string[]): DefinitionFile[] {
  const files: DefinitionFile[] = []
  for (const folder of folders) {
    let names: string[]
    try {
      names = readdirSync(folder).filter((name) => name.endsWith('.md') && !name.startsWith('.'))
    } catch (error) {
      // a folder that does not exist (yet) has no definitions; anything else is reported
      if ((error as NodeJS.ErrnoException)?.code !== 'ENOENT') files.push({ source: folder, readError: reason(error) })
      continue
    }
    names.sort()
    for (const name of names) files.push(readBounded(join(folder, name)))
  }
  return files
}
