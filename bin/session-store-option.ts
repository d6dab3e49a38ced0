/**
 * `--sessions <value>` of the CLI: which session store a command loads. A folder loads
 * `SessionFiles` on it.
 */
import type { Context } from 'cordis'
import SessionFiles from '../plugins/session-files/index.ts'

/** Loads the store `value` names on `root` (after the host: stores need `agents`). Rejects when it fails to load. */
export async function loadSessionStore(root: Context, value: string): Promise<void> {
  await root.plugin(SessionFiles, { dir: value } as SessionFiles.Config)
}

/**
 * Resolves once what the loaded stores were given has been written. The CLI ends a `resume`
 * without disposing the tree (so it stays resumable): this is what it waits for instead.
 */
export async function flushSessionStores(root: Context): Promise<void> {
  const files = root.get('sessionFiles') as SessionFiles | undefined
  await files?.flush()
}
