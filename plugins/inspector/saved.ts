/**
 * Saved sessions for `subagent-inprocess inspect <dir>`: every `*.jsonl` file of a folder read
 * whole. A finished agent's end time is its file's last modification (events carry no time). A torn last line is dropped and reported; a file that is not a session file is skipped
 * and reported; neither stops the others from being shown.
 */
import { readdir, readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { type AgentView, applyEvent, viewOfHeader } from '../../lib/session/agent-view.ts'
import { thrownMessage } from '../../lib/errors.ts'
import type { SessionEvent } from '../../lib/types.ts'
import { parseSessionFile } from '../session-files/index.ts'
import type { InspectorSource } from './server.ts'

export const tornMessage = (file: string) => `${file}: the last line was torn (a write cut short) and is not shown`
export const skippedMessage = (file: string, reason: string) => `${file}: skipped, ${reason}`

/** Reads the folder once. Rejects only when the folder itself cannot be read. */
export async function readSavedSessions(dir: string): Promise<InspectorSource> {
  const views = new Map<string, AgentView>()
  const logs = new Map<string, readonly SessionEvent[]>()
  const problems: string[] = []
  const names = (await readdir(dir)).filter((name) => name.endsWith('.jsonl')).sort()
  for (const name of names) {
    try {
      const file = join(dir, name)
      const [content, { mtimeMs }] = await Promise.all([readFile(file, 'utf8'), stat(file)])
      const parsed = parseSessionFile(name.slice(0, -'.jsonl'.length), content)
      const view = viewOfHeader(parsed.header)
      const seedLength = parsed.header.seedLength ?? 0
      for (const event of parsed.events) applyEvent(view, event, seedLength)
      // events carry no time: the file's last write is when its last turn ended
      if (view.status === 'idle' && view.stopReason !== undefined) view.endedAt = Math.max(view.startedAt, Math.round(mtimeMs))
      views.set(view.id, view)
      logs.set(view.id, parsed.events)
      if (parsed.isTorn) problems.push(tornMessage(name))
    } catch (error) {
      problems.push(skippedMessage(name, thrownMessage(error)))
    }
  }
  return { agents: () => [...views.values()], events: (id) => logs.get(id), problems: () => problems }
}
