/**
 * Durable-tree scenes: one "process" writes a tree's session files, a copy of the folder taken
 * while its agents are still mid-turn stands for what a crash leaves, and a second host resumes
 * from that copy.
 */
import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { ScenePlugin } from '../support/scene.ts'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import { createFilesHost, type FilesHost } from '../session-files/fixture.ts'

/** A host on session files in `dir` (a fresh folder when absent), with the driver and `plugins`. */
export function durableHost(dir?: string, plugins: readonly ScenePlugin[] = []): Promise<FilesHost> {
  return createFilesHost(dir, {}, [InProcessRun, ...plugins])
}

const copies: string[] = []

// after the scenes of the test closed (their hook was registered first): nothing writes there any more
afterEach(async () => {
  for (const copy of copies.splice(0)) await rm(copy, { recursive: true, force: true })
})

/** Removes `dir` after the test, once its scenes have closed. */
export function removeAfterTest(dir: string): void {
  copies.push(dir)
}

/**
 * What a crash of `host` right now would leave on disk: its writes so far flushed, the folder's
 * files copied into a new folder (removed after the test). The host itself goes on.
 */
export async function crashCopy(host: FilesHost): Promise<string> {
  await host.files.flush()
  const copy = await mkdtemp(join(tmpdir(), 'crashed-tree-'))
  copies.push(copy)
  for (const name of await readdir(host.dir)) await copyFile(join(host.dir, name), join(copy, name))
  return copy
}

/** Resolves on the next macrotask: lets queued writes and timers run. */
export function tick(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}
