/**
 * A throwaway PostgreSQL cluster for the tests that need a real server: `initdb` + `pg_ctl` in a
 * temporary folder, listening on a free port of 127.0.0.1 only, started on first use and stopped
 * (its folder removed) when the run ends. One cluster serves the whole run; each test takes its own
 * schema. As root the server runs as the `postgres` user (it refuses to run as root); otherwise as
 * the current user. Loaded for every run by `.mocharc.json` (the `afterAll` root hook); a spec file
 * calls `usePostgres(this)` in its `before` hook.
 *
 * When the binaries are missing, `usePostgres` says so loudly and skips the suite; under `CI=true`
 * it fails instead, so CI never passes without having run the Postgres tests.
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

/** A running cluster. */
export interface PostgresCluster {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` (trust authentication, loopback only). */
  connectionString: string
  port: number
  /** Stops the server at once (`immediate`: a crash, as far as clients see). The event loop runs meanwhile. */
  stop(): Promise<void>
  /** Starts the stopped server again, on the same port and data. */
  start(): Promise<void>
}

/** The folder holding `initdb` and `pg_ctl`: PATH first, then Debian's versioned folders. */
export function postgresBinDir(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir && existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'))) return dir
  }
  const base = '/usr/lib/postgresql'
  if (!existsSync(base)) return undefined
  const versions = readdirSync(base)
    .filter((name) => /^\d+$/.test(name))
    .sort((a, b) => Number(b) - Number(a))
  for (const version of versions) {
    const dir = join(base, version, 'bin')
    if (existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'))) return dir
  }
  return undefined
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0))
    })
  })
}

const isRoot = process.getuid?.() === 0

function ownerCommand(bin: string, args: string[]): [string, string[]] {
  return isRoot ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args]
}

/** Runs a PostgreSQL binary as the cluster's owner, blocking; throws with its output when it fails. */
function runAsOwner(bin: string, args: string[]): void {
  const [command, commandArgs] = ownerCommand(bin, args)
  const result = spawnSync(command, commandArgs, { encoding: 'utf8', cwd: tmpdir() })
  if (result.status !== 0) {
    throw new Error(`${bin} ${args.join(' ')} failed (${result.status ?? result.signal}):\n${result.stdout}\n${result.stderr}`)
  }
}

/** `runAsOwner` without blocking the event loop. */
async function runAsOwnerAsync(bin: string, args: string[]): Promise<void> {
  const [command, commandArgs] = ownerCommand(bin, args)
  await promisify(execFile)(command, commandArgs, { encoding: 'utf8', cwd: tmpdir() })
}

let cluster: Promise<PostgresCluster> | undefined
let cleanup: (() => void) | undefined

/**
 * Starts a cluster of its own (not the run's shared one): `initdb` + `pg_ctl` in a temp folder on a
 * free port. `close()` stops it and removes the folder; so does the process's exit. For the
 * benchmark's `--variant=postgres`.
 */
export async function startThrowawayCluster(binDir: string): Promise<PostgresCluster & { close(): void }> {
  const started = await startCluster(binDir)
  const close = cleanup!
  cleanup = undefined
  return { ...started, close }
}

async function startCluster(binDir: string): Promise<PostgresCluster> {
  const folder = mkdtempSync(join(tmpdir(), 'subagent-pg-'))
  const data = join(folder, 'data')
  if (isRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim())
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim())
    chownSync(folder, uid, gid)
  }
  chmodSync(folder, 0o700)
  const initdb = join(binDir, 'initdb')
  const pgCtl = join(binDir, 'pg_ctl')
  runAsOwner(initdb, ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C'])
  const port = await freePort()
  // fsync off: the OS never crashes under a test; commits stay synchronous, so a server killed
  // with `immediate` (a crash) keeps every committed row, as a real one does
  const options = `-p ${port} -k ${folder} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=200`
  const log = join(folder, 'server.log')
  const startArgs = ['-D', data, '-l', log, '-o', options, '-w', '-t', '60', 'start']
  const stopArgs = ['-D', data, '-m', 'immediate', '-w', 'stop']
  const stop = () => runAsOwner(pgCtl, stopArgs)
  runAsOwner(pgCtl, startArgs)
  let stopped = false
  cleanup = () => {
    if (stopped) return
    stopped = true
    try {
      stop()
    } catch {
      // already down
    }
    rmSync(folder, { recursive: true, force: true })
  }
  process.once('exit', cleanup)
  return {
    connectionString: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    stop: () => runAsOwnerAsync(pgCtl, stopArgs),
    start: () => runAsOwnerAsync(pgCtl, startArgs),
  }
}

/**
 * The run's cluster, started on first call. In a `before` hook: skips the suite with a loud
 * message when PostgreSQL is not installed, and fails it instead under `CI=true`.
 */
export async function usePostgres(context: Mocha.Context): Promise<PostgresCluster> {
  const binDir = postgresBinDir()
  if (!binDir) {
    const message = 'PostgreSQL binaries (initdb, pg_ctl) not found: the PostgreSQL tests did NOT run. Install the server (apt-get install -y postgresql) to run them.'
    if (process.env.CI === 'true') throw new Error(`${message} CI must run them.`)
    process.stderr.write(`\n!!! ${message}\n\n`)
    context.skip()
  }
  context.timeout(120_000)
  cluster ??= startCluster(binDir as string)
  return cluster
}

let schemaCount = 0
/** A schema name no other test of the run uses. */
export function freshSchema(prefix = 'test'): string {
  return `${prefix}_${process.pid}_${++schemaCount}`
}

export const mochaHooks = {
  afterAll(): void {
    cleanup?.()
    cluster = undefined
  },
}
