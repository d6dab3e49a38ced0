/**
 * `SessionFiles` (SPEC §1.2): one JSONL file per published session, appended as events happen,
 * read back by `ctx.agents.resume(id)`.
 */
import { mkdir } from 'node:fs/promises'
import { join, resolve, sep } from 'node:path'
import { type Context, type Fiber, Service } from 'cordis'
import Schema from 'schemastery'
import { localizeConfig } from '../../locales/index.ts'
import type { Agent, Session } from '../../lib/types.ts'
import { thrownMessage } from '../../lib/errors.ts'
import { isDisposedForGood, listenDirect, type StoredSession } from '../host/index.ts'
import { messages, SessionFileError } from './errors.ts'
import { assertSessionId, fileSuffix, isSafeSessionId, parseSessionFile } from './file-format.ts'
import { nodeFileSystem, type SessionFileSystem } from './file-system.ts'
import { OpenFileGate } from './open-file-gate.ts'
import { SessionWriter, type StartMode, type WriterHooks } from './session-writer.ts'
import { TreeIndex } from './tree-index.ts'

export { SessionFileError } from './errors.ts'
export { formatVersion, type ParsedSessionFile, parseSessionFile } from './file-format.ts'

declare module 'cordis' {
  interface Context {
    sessionFiles: SessionFiles
  }
}

// far below the usual limit of 1,024 descriptors, and beyond what libuv's 4 file threads can use
const defaultMaxOpenFiles = 32

/**
 * The sessions an instance still followed when it closed, for the next instance of the same fiber
 * (a config update restarts it). Between the two nobody listens: an agent disposed meanwhile
 * appends its last events (its interrupted message, its `turn/end`) unheard, and the next instance
 * no longer finds it among the live agents. Kept with the fiber, and only for a restart: a final
 * unload (the fiber disposed) hands nothing on.
 */
const handoffs = new WeakMap<Fiber, readonly Session[]>()

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
  /** One bound for every file operation of this instance: writes of all sessions, and `load`. */
  private readonly gate: OpenFileGate
  private readonly fs: SessionFileSystem = nodeFileSystem
  private readonly logger: ReturnType<Context['logger']>
  private readonly fiber: Fiber
  private readonly tree: TreeIndex
  private readonly writerHooks: WriterHooks
  /** Format 2 disposal markers being removed: `flush()` waits for them too. */
  private readonly markers = new Set<Promise<void>>()
  private closed = false

  constructor(ctx: Context, config: SessionFiles.Config) {
    super(ctx, 'sessionFiles')
    this.dir = resolve(config.dir)
    this.gate = new OpenFileGate(config.maxOpenFiles ?? defaultMaxOpenFiles)
    this.logger = ctx.logger('session-files')
    this.ready = mkdir(this.dir, { recursive: true }).then(() => {})
    // writers wait for it and report a failure themselves; `Service.init` surfaces it to the loader
    this.ready.catch(() => {})

    // a resumed agent gets `create` too: its file holds an earlier state of the same session, which
    // the writer recognises and replaces, so a resume that fails leaves nothing to clean up here
    this.tree = new TreeIndex(this.dir, this.fs, this.gate, (message) => this.logger.warn(message))
    this.writerHooks = {
      folder: this.dir.endsWith(sep) ? this.dir : this.dir + sep,
      ready: this.ready,
      gate: this.gate,
      fs: this.fs,
      onFailure: (failed, error) => this.report(failed, error),
      onRelease: (released) => {
        if (this.writers.get(released.id) === released) this.writers.delete(released.id)
      },
      // a disposed session resumed on purpose is live again: its file, rewritten, ends without a
      // disposal record (unless it was disposed again meanwhile), and a format 2 marker beside it goes
      onResumed: (resumed) => this.marker(resumed.id, () => this.tree.clearDisposed(resumed.id)),
    }
    // once or more per event of every agent: entered straight into the listener table, sparing each
    // call cordis's reflection wrapper
    listenDirect(ctx, 'agent/created', (agent) => this.track(agent.session, 'create'))
    listenDirect(ctx, 'session/event', (session) => this.writers.get(session.id)?.follow(session))
    listenDirect(ctx, 'agent/disposed', (agent) => this.untrack(agent))
    ctx.on('session/load', (id) => this.load(id))
    ctx.on('session/children', (parentId) => this.children(parentId))
    // agents published before this plugin loaded (a hot reload, a late load): the session in
    // memory is complete, so it replaces whatever file holds that id
    for (const agent of ctx.agents.list()) this.track(agent.session, 'replace')
    this.fiber = ctx.fiber
    const handedOff = handoffs.get(this.fiber)
    handoffs.delete(this.fiber)
    // an agent disposed while this plugin restarted (nobody heard its last events, nor its
    // `agent/disposed`): its complete session replaces its file, the disposal record at the end,
    // in this instance's folder
    for (const session of handedOff ?? []) {
      if (this.writers.has(session.id)) continue
      this.track(session, 'replace')
      this.writers.get(session.id)?.release(true)
    }
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
    // read after the writes: a resume's write queues the removal of a format 2 marker as it finishes
    await Promise.all(this.markers)
  }

  /**
   * Ids of the stored sessions, not disposed, whose header's `parentSession` is `parentId`, oldest
   * first (SPEC §14, `session/children`), after the writes queued so far. Rejects when the folder
   * cannot be listed.
   */
  async children(parentId: string): Promise<string[]> {
    await this.flush()
    return this.tree.children(parentId)
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
      text = await this.gate.run(() => this.fs.read(path))
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new SessionFileError(id, messages.notFound(id))
      throw new SessionFileError(id, messages.unreadable(id, thrownMessage(error)), { cause: error })
    }
    const { header, events, isTorn, isDisposed } = parseSessionFile(id, text)
    if (isTorn) this.logger.warn(messages.tornTail(id, events.length))
    await Promise.all(this.markers)
    // a file of format 2 records its disposal as a marker beside it
    return isDisposed || (await this.tree.hasMarker(id)) ? { header, events, disposed: true } : { header, events }
  }

  /** Ids of the sessions being written: published ones, and disposed ones with writes pending. */
  tracked(): string[] {
    return [...this.writers.keys()]
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
      writer = new SessionWriter(id, this.writerHooks)
      this.writers.set(id, writer)
    }
    writer.start(session, mode)
  }

  private untrack(agent: Agent): void {
    const writer = this.writers.get(agent.id)
    if (writer && writer.session === agent.session) writer.release(true)
  }

  /** Runs a marker removal (`flush()` waits for it); a failure is logged, never thrown. */
  private marker(id: string, write: () => Promise<void>): void {
    const pending: Promise<void> = this.ready
      .then(write)
      .catch((error: unknown) => this.logger.warn(messages.markerNotRemoved(id, thrownMessage(error))))
      .finally(() => this.markers.delete(pending))
    this.markers.add(pending)
  }

  private report(writer: SessionWriter, error: unknown): void {
    const code = (error as NodeJS.ErrnoException | undefined)?.code
    this.logger.warn(
      code === 'EEXIST' ? messages.alreadyExists(writer.id) : messages.writeFailed(writer.id, thrownMessage(error)),
    )
  }

  private async close(): Promise<void> {
    this.closed = true
    // a fiber disposed for good has no next instance: handing off would only keep the sessions
    // alive for as long as anything holds the fiber
    if (!isDisposedForGood(this.fiber)) {
      const followed: Session[] = []
      for (const { session } of this.writers.values()) if (session) followed.push(session)
      handoffs.set(this.fiber, followed)
    }
    // writes everything seen so far, the held deltas included
    await this.flush()
    this.writers.clear()
  }
}

export namespace SessionFiles {
  export const inject = ['agents']

  export interface Config {
    dir: string
    /** File operations (so open descriptors) at once, across every session; default 32. */
    maxOpenFiles?: number
  }

  // field descriptions: `config.sessionFiles` in locales/*.yml
  export const Config: Schema<Config> = localizeConfig(
    Schema.object({
      dir: Schema.string().required(),
      maxOpenFiles: Schema.natural().min(1).default(defaultMaxOpenFiles),
    }),
    'sessionFiles',
  )
}

export default SessionFiles
