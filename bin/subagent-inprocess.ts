#!/usr/bin/env node
/**
 * `subagent-inprocess start [config] [--watch]`: runs a host config (default `cordis.yml`) on one
 * root context. Without `--watch` the process ends when a plugin emits `loader/exit` (or on
 * SIGINT/SIGTERM); with `--watch` it stays up and reloads on every change of the config or of a
 * loaded plugin file. Warnings and errors go to stderr.
 */
import { parseArgs } from 'node:util'
import { Context } from 'cordis'
import { Loader, printLogs, type ReloadReport } from '../plugins/loader/index.ts'

const usage = `usage: subagent-inprocess start [config] [--watch]

  config       host config file (default: cordis.yml)
  -w, --watch  reload changed plugins and config entries; keep running after loader/exit
  -h, --help   show this help
`

function summary(report: ReloadReport): string {
  const parts: string[] = []
  for (const key of ['loaded', 'updated', 'restarted', 'unloaded'] as const) {
    if (report[key].length) parts.push(`${key} ${report[key].join(', ')}`)
  }
  if (report.failed.length) parts.push(`${report.failed.length} failed`)
  return parts.length ? parts.join('; ') : 'no change'
}

async function start(file: string, watch: boolean): Promise<void> {
  const root = new Context()
  printLogs(root, (line) => process.stderr.write(line), { colors: process.stderr.isTTY ? 3 : 0 })
  const loader = new Loader(root, file, { watch })

  let exiting = false
  const exit = async (code: number) => {
    if (exiting) return
    exiting = true
    await loader.dispose()
    process.exit(code)
  }
  process.once('SIGINT', () => void exit(130))
  process.once('SIGTERM', () => void exit(143))
  // SIGHUP re-reads the config, the conventional way to reload without --watch
  process.on('SIGHUP', () => void loader.reload().catch(() => {}))

  loader.on('exit', (code) => {
    if (!watch) return void exit(code)
    process.stderr.write(`exit ${code} requested; still watching (Ctrl-C to stop)\n`)
  })
  loader.on('reloaded', (report) => {
    process.stderr.write(`reloaded ${report.file}: ${summary(report)}\n`)
  })

  const report = await loader.start()
  // a config file that cannot be read or parsed at all leaves nothing to run
  if (!watch && report.failed.some((failure) => failure.entry === undefined)) await exit(1)
  if (watch) process.stderr.write(`watching ${loader.file} and its plugin files\n`)
}

function parse(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      options: { watch: { type: 'boolean', short: 'w' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
    })
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${usage}`)
    process.exit(2)
  }
}

async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parse(argv)
  if (values.help) return void process.stdout.write(usage)
  const [command, file = 'cordis.yml', ...extra] = positionals
  if (command !== 'start' || extra.length) {
    process.stderr.write(command === undefined || command === 'start' ? usage : `unknown command "${command}"\n\n${usage}`)
    process.exit(2)
  }
  await start(file, !!values.watch)
}

await main(process.argv.slice(2))
