/**
 * The file operations session files need, behind one object: writers and `load` call it at the
 * time of each operation, so a test can replace a method (sinon) to count or fail operations
 * without touching the real disk or the real open-file limit.
 */
import { access, appendFile, open, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises'

export interface SessionFileSystem {
  /** Appends `text` (opens, writes, closes: one descriptor while it runs). */
  append(path: string, text: string): Promise<void>
  /** Creates the file with `text`; rejects with `EEXIST` when it exists. */
  create(path: string, text: string): Promise<void>
  rename(from: string, to: string): Promise<void>
  /** Removes the file if it exists. */
  remove(path: string): Promise<void>
  read(path: string): Promise<string>
  /** The names in a folder. */
  list(dir: string): Promise<string[]>
  /** The file's first `bytes` bytes (fewer when it is shorter), as UTF-8 text. */
  readHead(path: string, bytes: number): Promise<string>
  /** The file's last `bytes` bytes (fewer when it is shorter), as UTF-8 text. */
  readTail(path: string, bytes: number): Promise<string>
  /** Whether the file exists. */
  exists(path: string): Promise<boolean>
}

export const nodeFileSystem: SessionFileSystem = {
  append: (path, text) => appendFile(path, text),
  create: (path, text) => writeFile(path, text, { flag: 'wx' }),
  rename: (from, to) => rename(from, to),
  remove: (path) => rm(path, { force: true }),
  read: (path) => readFile(path, 'utf8'),
  list: (dir) => readdir(dir),
  readHead: (path, bytes) => readPart(path, bytes, 'head'),
  readTail: (path, bytes) => readPart(path, bytes, 'tail'),
  exists: (path) =>
    access(path).then(
      () => true,
      () => false,
    ),
}

/** The file's first or last `bytes` bytes, as UTF-8 text (one descriptor). */
async function readPart(path: string, bytes: number, part: 'head' | 'tail'): Promise<string> {
  const handle = await open(path, 'r')
  try {
    const position = part === 'head' ? 0 : Math.max(0, (await handle.stat()).size - bytes)
    const buffer = Buffer.alloc(bytes)
    const { bytesRead } = await handle.read(buffer, 0, bytes, position)
    return buffer.subarray(0, bytesRead).toString('utf8')
  } finally {
    await handle.close()
  }
}
