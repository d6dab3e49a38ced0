/**
 * The open-file-limit scenario of `open-files.spec.ts`, run in its own process under a low
 * `ulimit -n`: CHILDREN concurrent spawned children of one parent, all held live inside their
 * first model call so that every session file is started and written at once, then released to
 * finish a tool step. Every file is then checked line by line against its session, every child is
 * disposed and resumed from its file (all at once again), and the resumed events are compared.
 * Prints one JSON report on stdout. Usage: `node --import tsx open-files-scenario.ts <children>`.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from 'cordis'
import type { Agent, ModelRequest, StreamPart, SubagentRun } from '../../lib/types.ts'
import { Host } from '../../plugins/host/index.ts'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import { ScriptedModel } from '../../plugins/scripted-model/index.ts'
import { SessionFiles } from '../../plugins/session-files/index.ts'

const CHILDREN = Number(process.argv[2] ?? 3000)

export interface OpenFilesReport {
  children: number
  /** Files whose lines equal the header and every event of their live session. */
  complete: number
  missing: number
  incomplete: number
  /** Children resumed from their file with exactly the events they had. */
  resumed: number
  resumeFailures: string[]
  warnings: string[]
  openFileLimit: string
}

/** The file lines (format 2) of this scenario's sessions: each message follows its one delta, whose text it leaves out. */
function linesOf(agent: Agent): string[] {
  const header = JSON.stringify({ version: 3, header: agent.session.header })
  const { events } = agent.session
  return [
    header,
    ...events.map((event, i) => {
      const { seq, type, data } = event
      if (type !== 'assistant/message' || events[i - 1]?.type !== 'assistant/delta') return JSON.stringify({ seq, type, data })
      const { content } = data as { content: unknown[] }
      return JSON.stringify({ seq, type, data: { ...(data as object), content: [{ type: 'text' }, ...content.slice(1)] }, streamed: true })
    }),
  ]
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'open-files-'))
  const root = new Context()
  const warnings: string[] = []
  try {
    await root.plugin(Host, { maxSteps: 8 })
    await root.plugin(ScriptedModel, { provider: 'scripted', record: false })
    await root.plugin(InProcessRun)
    const files = root.plugin(SessionFiles, { dir })
    await files
    root.tools.register({ name: 'lookup', description: 'Looks something up.', parameters: { type: 'object' }, execute: () => ({ found: true }) })

    let waiting = 0
    let reached!: () => void
    const allWaiting = new Promise<void>((resolve) => (reached = resolve))
    let open!: () => void
    const opened = new Promise<void>((resolve) => (open = resolve))
    root.models.register('held', {
      async *stream(request: ModelRequest): AsyncGenerator<StreamPart> {
        if (!request.messages.some((message) => message.role === 'tool')) {
          if (++waiting === CHILDREN) reached()
          await opened
          yield { type: 'text-delta', text: 'checking' }
          yield { type: 'tool-call', id: 'c1', name: 'lookup', arguments: '{}' }
          yield { type: 'finish', reason: 'tool-calls', usage: { inputTokens: 10, outputTokens: 2 } }
          return
        }
        yield { type: 'text-delta', text: 'found it' }
        yield { type: 'finish', reason: 'stop', usage: { inputTokens: 12, outputTokens: 3 } }
      },
    })
    const parent = await root.agents.create({ agentOptions: { provider: 'held', model: 'm' } })
    const runs: Promise<SubagentRun>[] = []
    for (let i = 0; i < CHILDREN; i++) {
      runs.push(root.inprocessRun.spawn({ parent: parent.agent, prompt: `task ${i}`, label: `task ${i}`, signal: new AbortController().signal }))
    }
    const started = await Promise.all(runs)
    await allWaiting
    open()
    const results = await Promise.all(started.map((run) => run.result))
    const notCompleted = results.filter((result) => result.stopReason !== 'completed').length
    if (notCompleted) throw new Error(`${notCompleted} children did not complete`)
    await root.sessionFiles.flush()

    let complete = 0
    let missing = 0
    let incomplete = 0
    const expected = new Map<string, Agent>()
    for (const run of started) {
      expected.set(run.agent.id, run.agent)
      let text: string
      try {
        text = await readFile(join(dir, `${run.agent.id}.jsonl`), 'utf8')
      } catch {
        missing++
        continue
      }
      if (text === `${linesOf(run.agent).join('\n')}\n`) complete++
      else incomplete++
    }
    await Promise.all(started.map((run) => run.dispose()))
    await root.sessionFiles.flush()

    let resumed = 0
    const resumeFailures: string[] = []
    const handles = await Promise.all(
      [...expected.keys()].map((id) =>
        root.agents.resume(id, { agentOptions: { provider: 'held', model: 'm' } }).catch((error: Error) => {
          resumeFailures.push(error.message)
          return undefined
        }),
      ),
    )
    for (const handle of handles) {
      if (!handle) continue
      const before = expected.get(handle.agent.id)!
      if (JSON.stringify(handle.agent.session.events) === JSON.stringify(before.session.events)) resumed++
    }
    await Promise.all(handles.map((handle) => handle?.dispose()))
    await parent.dispose()
    await files.dispose()
    // the plugin's warnings (a write that failed, a file refused) are what "dropped silently" hides
    for (const message of root.logger.buffer) {
      if (message.type === 'warn' || message.type === 'error') warnings.push(message.args.map(String).join(' '))
    }

    const report: OpenFilesReport = {
      children: CHILDREN,
      complete,
      missing,
      incomplete,
      resumed,
      resumeFailures: resumeFailures.slice(0, 5),
      warnings: warnings.slice(0, 5),
      openFileLimit: process.env.OPEN_FILE_LIMIT ?? 'unknown',
    }
    process.stdout.write(`${JSON.stringify(report)}\n`)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

await main()
