/**
 * `subagent-inprocess resume <root-id> [config] [--sessions <dir>]`: loads a host config as `start`
 * does, publishes the stored tree `<root-id>` again (`ctx.inprocessRun.resumeTree`), and goes on
 * with it: each line read from stdin is a message to the root, whose streamed text goes to stdout.
 * At the end of input (once the root is idle and its background runs delivered) or on
 * SIGINT/SIGTERM the process ends **without disposing the tree**: its sessions are flushed and it
 * stays resumable.
 */
import { createInterface } from 'node:readline'
import { parseArgs } from 'node:util'
import { Context } from 'cordis'
import { thrownMessage } from '../lib/errors.ts'
import { isLocale, type Locale } from '../lib/text/i18n.ts'
import type { Agent, ResumedTree } from '../lib/types.ts'
import { text } from '../locales/index.ts'
import { Loader, printLogs } from '../plugins/loader/index.ts'
import { backgroundSettled } from '../plugins/subagent-tool/index.ts'
import { checkSessionStore, flushSessionStores, isPostgresUrl, loadSessionStore, parseSessionStore, safeWhere } from './session-store-option.ts'

function fail(message: string, code = 1): never {
  process.stderr.write(`${message}\n`)
  process.exit(code)
}

/** Streams the root's text to stdout as it arrives, and a line per finished turn of any agent of the tree to stderr. */
function follow(root: Context, tree: ResumedTree, locale: Locale): void {
  const names = new Map<string, string>([[tree.root.id, 'root']])
  for (const agent of tree.agents) names.set(agent.id, agent.session.header.label ?? agent.id)
  root.on('session/event', (session, event) => {
    if (session === tree.root.session && event.type === 'assistant/delta') {
      process.stdout.write((event.data as { text: string }).text)
    } else if (event.type === 'turn/end') {
      if (session === tree.root.session) process.stdout.write('\n')
      const name = names.get(session.id) ?? session.header.label ?? session.id
      const kind = (event.data as { reason: { kind: string } }).reason.kind
      process.stderr.write(`${text(locale, 'cli.resumeTurnEnded', { name, kind })}\n`)
    }
  })
  root.on('agent/created', (agent) => {
    if (agent.session.header.parentSession !== undefined) names.set(agent.id, agent.session.header.label ?? agent.id)
  })
}

async function idle(agent: Agent): Promise<void> {
  while (agent.status === 'running') await agent.whenIdle()
}

/** Runs the command; `argv` is what follows `resume`. */
export async function resumeCommand(argv: string[]): Promise<void> {
  let parsed: ReturnType<typeof parse>
  try {
    parsed = parse(argv)
  } catch (error) {
    fail(`${thrownMessage(error)}\n\n${text('en-US', 'cli.usage')}`, 2)
  }
  const { values, positionals } = parsed
  const requested = values.locale ?? 'en-US'
  if (!isLocale(requested)) fail(`${text('en-US', 'cli.unknownLocale', { locale: requested })}\n\n${text('en-US', 'cli.usage')}`, 2)
  const locale: Locale = requested
  const [rootId, file = 'cordis.yml', ...extra] = positionals
  if (rootId === undefined || extra.length) fail(`${text(locale, 'cli.resumeArguments')}\n\n${text(locale, 'cli.usage')}`, 2)

  const root = new Context()
  printLogs(root, (line) => process.stderr.write(line), { colors: process.stderr.isTTY ? 3 : 0, level: 1 })
  const loader = new Loader(root, file, { watch: false, locale, pluginLocale: values.locale === undefined ? undefined : locale })
  const report = await loader.start()
  if (report.failed.length) fail(text(locale, 'cli.startFailed', { count: report.failed.length }))
  if (values.sessions !== undefined) {
    const where = values.sessions
    try {
      const choice = parseSessionStore(where)
      await checkSessionStore(choice)
      await loadSessionStore(root, choice)
    } catch (error) {
      fail(text(locale, isPostgresUrl(where) ? 'cli.sessionStoreFailed' : 'cli.sessionsUnreadable', { dir: where, where: safeWhere(where), reason: thrownMessage(error) }))
    }
  }
  const driver = root.get('inprocessRun')
  if (!driver) fail(text(locale, 'cli.resumeNoDriver', { file }))
  let tree: ResumedTree
  try {
    tree = await driver.resumeTree(rootId)
  } catch (error) {
    fail(text(locale, 'cli.resumeFailed', { rootId, reason: thrownMessage(error) }))
  }
  process.stderr.write(`${text(locale, 'cli.resumed', { rootId, count: tree.agents.length })}\n`)
  follow(root, tree, locale)

  let leaving = false
  const leave = async (code: number) => {
    if (leaving) return
    leaving = true
    // the tree is not disposed: a disposed tree can never be resumed again
    await flushSessionStores(root)
    process.exit(code)
  }
  process.once('SIGINT', () => void leave(130))
  process.once('SIGTERM', () => void leave(143))
  const input = createInterface({ input: process.stdin, terminal: false })
  input.on('line', (line) => {
    if (line.trim()) tree.root.followup(line)
  })
  input.on('close', () => {
    void (async () => {
      // what is queued and what the tree's background runs bring back still belongs to this session
      do {
        await idle(tree.root)
        await backgroundSettled(tree.root)
      } while (tree.root.status === 'running')
      await leave(0)
    })()
  })
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    options: {
      sessions: { type: 'string' },
      locale: { type: 'string', short: 'l' },
    },
    allowPositionals: true,
  })
}
