/**
 * `SessionFiles` (SPEC §1.2): one JSONL file per published session, appended as events happen,
 * read back by `ctx.agents.resume(id)`.
 */
import { mkdir, readFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { type Context, Service } from 'cordis'
import Schema from 'schemastery'
import { localizeConfig } from '../../locales/index.ts'
import type { Agent, Session } from '../../lib/types.ts'
import type { StoredSession } from '../host/index.ts'
import { messages, reasonOf, SessionFileError } from './errors.ts'
import { assertSessionId, fileSuffix, isSafeSessionId, parseSessionFile } from './file-format.ts'
import { SessionWriter, type StartMode } from './session-writer.ts'

export { SessionFileError } from './errors.ts'
export { formatVersion, type ParsedSessionFile, parseSessionFile } from './file-format.ts'

declare module 'cordis' {
  interface Context {
    sessionFiles: SessionFiles
  }
}

/**
 * Persists sessions to `<dir>/<id>.jsonl` and answers `session/load` for `agents.resume`.
 * Writes are queued per file and never interleave; `flush()` waits for them, and unloading the
 * plugin flushes too. Disposing an agent never deletes its file.
 */
export class SessionFiles extends Service {
  // cordis calls service methods through a tracing proxy, where #private fields cannot be read
  /** Absolute folder the files live in. */
  readonly dir: string
  private readonly ready: Promise<void>
  private readonly writers = new Map<string, SessionWriter>()
  /** `createdAt` of sessions read for a resume: their agent's publication rewrites the file. */
  private readonly resuming = new Map<string, number>()
  private readonly logger: ReturnType<Context['logger']>
  private closed = false

  constructor(ctx: Context, config: SessionFiles.Config) {
    super(ctx, 'sessionFiles')
    this.dir = resolve(config.dir)
    this.logger = ctx.logger('session-files')
    this.ready = mkdir(this.dir, { recursive: true }).then(() => {})
    // writers wait for it and report a failure themselves; `Service.init` surfaces it to the loader
    this.ready.catch(() => {})

    ctx.on('agent/created', (agent) => this.track(agent.session, this.modeFor(agent.session)))
    ctx.on('session/event', (session) => this.writers.get(session.id)?.follow(session))
    ctx.on('agent/disposed', (agent) => this.untrack(agent))
    ctx.on('session/load', async (id) => {
      const stored = await this.load(id)
      this.resuming.set(id, stored.header.createdAt)
      return stored
    })
    // agents published before this plugin loaded (a hot reload, a late load): the session in
    // memory is complete, so it replaces whatever file holds that id
    for (const agent of ctx.agents.list()) this.track(agent.session, 'replace')
    ctx.effect(() => () => this.close(), 'session files')
  }

  /** Fails the plugin's load when the folder cannot be created. */
  async [Service.init](): Promise<void> {
    await this.ready
  }

  /** The file of session `id`. Throws `SessionFileError` for an id that is not a safe file name. */
  pathOf(id: string): string {
    assertSessionId(id)
    return join(this.dir, id + fileSuffix)
  }

  /**
   * Resolves once every write queued before the call has reached the file or was dropped by a
   * logged failure. Never rejects.
   */
  async flush(): Promise<void> {
    await Promise.all([...this.writers.values()].map((writer) => writer.flushed()))
  }

  /**
   * Reads and validates a stored session (after the writes queued for it). Rejects with
   * `SessionFileError` (unsafe id, missing, unreadable or malformed file) or with the host's header
   * error. A torn last line is dropped with a warning.
   */
  async load(id: string): Promise<StoredSession> {
    const path = this.pathOf(id)
    await this.writers.get(id)?.flushed()
    let text: string
    try {
      text = await readFile(path, 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new SessionFileError(id, messages.notFound(id))
      throw new SessionFileError(id, messages.unreadable(id, reasonOf(error)), { cause: error })
    }
    const { header, events, isTorn } = parseSessionFile(id, text)
    if (isTorn) this.logger.warn(messages.tornTail(id, events.length))
    return { header, events }
  }

  /** Ids of the sessions being written: published ones, and disposed ones with writes pending. */
  tracked(): string[] {
    return [...this.writers.keys()]
  }

  private modeFor(session: Session): StartMode {
    const createdAt = this.resuming.get(session.id)
    if (createdAt === undefined) return 'create'
    this.resuming.delete(session.id)
    return createdAt === session.header.createdAt ? 'replace' : 'create'
  }

  private track(session: Session, mode: StartMode): void {
    if (this.closed) return
    const { id } = session
    if (!isSafeSessionId(id)) {
      this.logger.warn(messages.unsafeIdSkipped(id))
      return
    }
    let writer = this.writers.get(id)
    if (!writer) {
      writer = new SessionWriter(id, join(this.dir, id + fileSuffix), {
        ready: this.ready,
        onFailure: (failed, error) => this.report(failed, error),
        onRelease: (released) => {
          if (this.writers.get(released.id) === released) this.writers.delete(released.id)
        },
      })
      this.writers.set(id, writer)
    }
    writer.start(session, mode)
  }

  private untrack(agent: Agent): void {
    const writer = this.writers.get(agent.id)
    if (writer && writer.session === agent.session) writer.release()
  }

  private report(writer: SessionWriter, error: unknown): void {
    const code = (error as NodeJS.ErrnoException | undefined)?.code
    this.logger.warn(
      code === 'EEXIST' ? messages.alreadyExists(writer.id) : messages.writeFailed(writer.id, reasonOf(error)),
    )
  }

  private async close(): Promise<void> {
    this.closed = true
    await this.flush()
    this.writers.clear()
    this.resuming.clear()
  }
}

export namespace SessionFiles {
  export const inject = ['agents']

  export interface Config {
    dir: string
  }

  // field descriptions: `config.sessionFiles` in locales/*.yml
  export const Config: Schema<Config> = localizeConfig(Schema.object({ dir: Schema.string().required() }), 'sessionFiles')
}

export default SessionFiles
