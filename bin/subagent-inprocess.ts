#!/usr/bin/env node
/**
 * `subagent-inprocess start [config] [--watch] [--verbose | --quiet]` (and `resume`, bin/resume.ts): runs a host config (default `cordis.yml`) on one
 * root context. Without `--watch` the process ends when a plugin emits `loader/exit` — once every
 * pending background subagent has delivered its result — or at once on SIGINT/SIGTERM; with
 * `--watch` it stays up and reloads on every change of the config or of a loaded plugin file.
 * Without `--watch`, an entry that fails at start stops the host with exit 1. `--locale` also sets
 * the default `locale` of every plugin that has one. Warnings and errors go to stderr.
 * Warnings and errors go to stderr (`--verbose`: down to debug, with hook lines in the transcript;
 * `--quiet`: errors only, and no transcript — the final summary and errors, for CI).
 */
// first: fail on an unsupported cordis before anything uses it
import '../cordis-glue/peer.ts'
import { parseArgs } from 'node:util'
import { Context } from 'cordis'
import { thrownMessage } from '../lib/errors.ts'
import { isLocale, type Locale } from '../lib/text/i18n.ts'
import { printable } from '../lib/text/terminal-text.ts'
import { text } from '../locales/index.ts'
import { Inspector, InspectorServer } from '../plugins/inspector/index.ts'
import { Loader, printLogs, type ReloadReport } from '../plugins/loader/index.ts'
import { backgroundSettled } from '../plugins/subagent-tool/index.ts'
import { check } from './check.ts'
import type { Verbosity } from '../plugins/transcript/index.ts'
import { attachApprovalPrompt } from './approval-prompt.ts'
import { resumeCommand } from './resume.ts'
import { checkSessionStore, describeSessionStore, loadSessionStore, parseSessionStore, readSessionsSource, type SessionStoreChoice } from './session-store-option.ts'

/** Ends the process with exit 1 after `message` on stderr: a missing folder or a taken port is not a crash. */
function fail(message: string): never {
  // a folder name or an error's text may hold control sequences: shown, never sent
  process.stderr.write(`${printable(message)}\n`)
  process.exit(1)
}

function summary(report: ReloadReport, locale: Locale): string {
  const parts: string[] = []
  for (const key of ['loaded', 'updated', 'restarted', 'unloaded'] as const) {
    if (report[key].length) parts.push(text(locale, `cli.${key}`, { names: report[key].join(', ') }))
  }
  if (report.failed.length) parts.push(text(locale, 'cli.failed', { count: report.failed.length }))
  return parts.length ? parts.join('; ') : text(locale, 'cli.noChange')
}

/** Most verbose log level printed per verbosity: errors only, warnings, or down to debug. */
const logLevels: Record<Verbosity, number> = { quiet: 0, normal: 1, verbose: 3 }

async function start(
  file: string,
  watch: boolean,
  locale: Locale,
  pluginLocale: Locale | undefined,
  inspectPort: number | undefined,
  verbosity: Verbosity,
  sessions?: SessionStoreChoice,
): Promise<void> {
  const root = new Context()
  if (inspectPort !== undefined) {
    // loaded before the config, so the page sees every agent from the first one on; and before the
    // log printer, so a taken port is one line of ours rather than cordis's error with its stack
    try {
      await root.plugin(Inspector, { port: inspectPort })
    } catch (error) {
      fail(text(locale, 'cli.inspectFailed', { reason: thrownMessage(error) }))
    }
    process.stderr.write(`${text(locale, 'cli.inspecting', { url: root.inspector.url })}\n`)
  }
  printLogs(root, (line) => process.stderr.write(line), { colors: process.stderr.isTTY ? 3 : 0, level: logLevels[verbosity] })
  // `--sessions`: the store goes in before the config and starts once the config's host does
  if (sessions) {
    await checkSessionStore(sessions).catch((error: unknown) =>
      fail(text(locale, 'cli.sessionStoreFailed', { where: describeSessionStore(sessions), reason: thrownMessage(error) })),
    )
    void loadSessionStore(root, sessions).catch((error: unknown) =>
      fail(text(locale, 'cli.sessionStoreFailed', { where: describeSessionStore(sessions), reason: thrownMessage(error) })),
    )
  }
  // console printers of the config (the demo's transcript) follow it
  root.provide('verbosity', { level: verbosity })
  // approval requests: answered here when stdin is a terminal, else printed (bin/approval-prompt.ts)
  const interactive = !!process.stdin.isTTY
  root.provide('approvalPrompt', { interactive })
  attachApprovalPrompt(root, { input: process.stdin, output: process.stdout, interactive, locale, silent: verbosity === 'quiet' })
  const loader = new Loader(root, file, { watch, locale, pluginLocale })

  let exiting = false
  let started: Promise<ReloadReport> | undefined
  const exit = async (code: number) => {
    if (exiting) return
    exiting = true
    await loader.dispose()
    // a host that ran without one of its entries did not succeed, whatever a plugin asked for
    const report = await started?.catch(() => undefined)
    process.exit(code === 0 && (report?.failed.length || report?.waiting.length) ? 1 : code)
  }
  process.once('SIGINT', () => void exit(130))
  process.once('SIGTERM', () => void exit(143))
  // a reader that went away (`… | head`) ends the host as SIGPIPE would, with its entries
  // unloaded; unheard, the stream's 'error' event would crash the process with a stack trace
  const onOutputError = (error: NodeJS.ErrnoException) => void exit(error.code === 'EPIPE' ? 141 : 1)
  process.stdout.on('error', onOutputError)
  process.stderr.on('error', onOutputError)
  // SIGHUP re-reads the config, the conventional way to reload without --watch
  process.on('SIGHUP', () => void loader.reload().catch(() => {}))

  loader.on('exit', (code) => {
    // a background child still running would be cancelled by the teardown and its result lost
    if (!watch) return void backgroundSettled().then(() => exit(code))
    process.stderr.write(`${text(locale, 'cli.stillWatching', { code })}\n`)
  })
  loader.on('reloaded', (report) => {
    process.stderr.write(`${text(locale, 'cli.reloaded', { file: report.file, summary: summary(report, locale) })}\n`)
  })

  started = loader.start()
  const report = await started
  if (watch) return void process.stderr.write(`${text(locale, 'cli.watching', { file: loader.file })}\n`)
  // without --watch nothing can fix a failed entry, nor provide a missing service: stop rather
  // than run a partial host (the loader started nothing when an entry failed)
  if (exiting) return
  if (report.failed.length) {
    const line = report.loaded.length ? 'cli.startFailed' : 'cli.nothingStarted'
    process.stderr.write(`${text(locale, line, { count: report.failed.length })}\n`)
  }
  for (const { entry, services } of report.waiting) {
    process.stderr.write(`${text(locale, 'cli.servicesMissing', { entry, services: services.map((name) => `"${name}"`).join(', ') })}\n`)
  }
  if (report.failed.length || report.waiting.length) await exit(1)
}

/** `inspect <sessions-dir | postgres-url> [port]`: serves the saved sessions until interrupted. */
async function inspect(where: string, port: number, locale: Locale): Promise<void> {
  let choice: SessionStoreChoice
  try {
    choice = parseSessionStore(where)
  } catch (error) {
    fail(text(locale, 'cli.sessionStoreFailed', { where, reason: thrownMessage(error) }))
  }
  const dir = describeSessionStore(choice)
  const source = await readSessionsSource(choice).catch((error: unknown) =>
    fail(text(locale, choice.kind === 'files' ? 'cli.sessionsUnreadable' : 'cli.sessionStoreFailed', { dir, where: dir, reason: thrownMessage(error) })),
  )
  const server = new InspectorServer(source, `subagent-inprocess inspector: ${dir}`)
  const url = await server.listen(port).catch((error: unknown) => fail(text(locale, 'cli.inspectFailed', { reason: thrownMessage(error) })))
  for (const problem of source.problems()) process.stderr.write(`${printable(problem)}\n`)
  process.stdout.write(`${text(locale, 'cli.inspecting', { url })}\n`)
  const stop = () => void server.close().then(() => process.exit(0))
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
}

/** Takes `--inspect [port]` out of argv (node's parseArgs has no optional values): port 0 = any free one. */
function takeInspect(argv: string[]): { argv: string[]; port?: number } {
  const index = argv.indexOf('--inspect')
  if (index < 0) return { argv }
  const next = argv[index + 1]
  const hasPort = next !== undefined && /^\d{1,5}$/.test(next)
  const rest = argv.slice(0, index).concat(argv.slice(index + (hasPort ? 2 : 1)))
  return { argv: rest, port: hasPort ? Number(next) : 0 }
}

function parse(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      options: {
        watch: { type: 'boolean', short: 'w' },
        help: { type: 'boolean', short: 'h' },
        locale: { type: 'string', short: 'l' },
        verbose: { type: 'boolean', short: 'v' },
        quiet: { type: 'boolean', short: 'q' },
        sessions: { type: 'string' },
      },
      allowPositionals: true,
    })
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${text('en-US', 'cli.usage')}`)
    process.exit(2)
  }
}

async function main(args: string[]): Promise<void> {
  // its own options (`--sessions`): bin/resume.ts
  if (args[0] === 'resume' && !args.includes('--help') && !args.includes('-h')) return resumeCommand(args.slice(1))
  const { argv, port: inspectPort } = takeInspect(args)
  const { values, positionals } = parse(argv)
  const requested = values.locale ?? 'en-US'
  if (!isLocale(requested)) {
    process.stderr.write(`${text('en-US', 'cli.unknownLocale', { locale: requested })}\n\n${text('en-US', 'cli.usage')}`)
    process.exit(2)
  }
  const locale: Locale = requested
  const usage = text(locale, 'cli.usage')
  if (values.help) return void process.stdout.write(usage)
  const [command, file = 'cordis.yml', ...extra] = positionals
  if (command === 'check') {
    if (positionals.length !== 2) {
      process.stderr.write(`${text(locale, 'cli.checkArguments')}\n\n${usage}`)
      process.exit(2)
    }
    const write = (stream: NodeJS.WriteStream) => (line: string) => stream.write(`${line}\n`)
    return process.exit(await check(positionals[1]!, locale, { out: write(process.stdout), err: write(process.stderr) }))
  }
  if (command === 'inspect' && positionals[1] !== undefined && extra.length <= 1 && (extra[0] ?? '0').match(/^\d{1,5}$/)) {
    return inspect(positionals[1], Number(extra[0] ?? 0), locale)
  }
  const problem =
    command === undefined
      ? text(locale, 'cli.noCommand')
      : command === 'inspect'
        ? text(locale, 'cli.inspectArguments')
        : command !== 'start'
          ? text(locale, 'cli.unknownCommand', { command })
          : extra.length
            ? text(locale, 'cli.extraArgument', { argument: extra[0]!, file })
            : undefined
  if (problem !== undefined) {
    process.stderr.write(`${problem}\n\n${usage}`)
    process.exit(2)
  }
  if (values.verbose && values.quiet) {
    process.stderr.write(`${text(locale, 'cli.verboseAndQuiet')}\n\n${usage}`)
    process.exit(2)
  }
  const verbosity = values.quiet ? 'quiet' : values.verbose ? 'verbose' : 'normal'
  let sessions: SessionStoreChoice | undefined
  try {
    sessions = values.sessions === undefined ? undefined : parseSessionStore(values.sessions)
  } catch (error) {
    process.stderr.write(`${thrownMessage(error)}\n\n${usage}`)
    process.exit(2)
  }
  await start(file, !!values.watch, locale, values.locale === undefined ? undefined : locale, inspectPort, verbosity, sessions)
}

await main(process.argv.slice(2))
