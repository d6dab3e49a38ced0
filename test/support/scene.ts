/**
 * The one test scene for integration suites: a fresh host (`Host` + `ScriptedModel`) with the
 * chosen plugins, the invariant observer installed first, and the leak-check baseline taken once
 * the plugins are in, before any agent exists.
 *
 * Closing is automatic: a root `afterEach` (registered when this module loads) closes every scene
 * the test opened. After a passing test it disposes what the scene created, then checks the
 * invariants, the used-up script (when asked) and the baseline, unloads the scene's plugins and
 * checks nothing they owned is left; a broken check fails that test, not the hook, so the rest
 * of the suite still runs. After a failing test it only cleans up, so one failed `expect` never
 * leaks agents, plugins or listeners into the next test. Open scenes in a test or a `beforeEach`,
 * never in a `before` (the scene would close after the first test).
 */
import { expect } from 'chai'
import type { Context, Fiber, Plugin } from 'cordis'
import type { Agent, AgentHandle, CreateAgentOptions, SessionEvent, ToolResult } from '../../lib/types.ts'
import { scopeOf } from '../../plugins/host/scope.ts'
import { createHost, type Snapshot, type TestHost } from './harness.ts'
import { type Invariants, installInvariants } from './invariants.ts'
import './unhandled.ts'

/** A plugin, or a plugin with its config. */
export type ScenePlugin = Plugin | readonly [plugin: Plugin, config: unknown]

export interface SceneOptions {
  /** The host's `maxSteps`. */
  maxSteps?: number
  /** Loaded in this order after the host, before the baseline; unloaded (reversed) at close. */
  plugins?: readonly ScenePlugin[]
  /** Fail the scene when the scripted model still holds unused entries at close. */
  scriptUsedUp?: boolean
}

export interface Scene extends TestHost {
  invariants: Invariants
  /**
   * What the close compares the host with. A test that unloads one of the scene's plugins for good
   * points it at the snapshot taken before that plugin (`snapshots`).
   */
  baseline: Snapshot
  /** The host after each of `plugins` loaded, in order; index 0 is the host without them. */
  readonly snapshots: readonly Snapshot[]
  /** The fiber of each of `plugins`, in order. */
  readonly fibers: readonly Fiber[]
  /** Creates a published agent on the scripted model (`scripted`/`test` unless overridden), disposed at close. */
  create(options?: CreateAgentOptions): Promise<AgentHandle>
  /** A global listener on the root context, removed at close before the checks. */
  on: Context['on']
  /**
   * Loads a plugin for this test only (a hot load, a failing config): unloaded at close before the
   * checks, so they compare with the baseline taken without it.
   */
  load(plugin: Plugin, config?: unknown): Fiber
  /** Runs `cleanup` at close after the checks and the plugins' unload (last registered, first run). */
  defer(cleanup: () => unknown): void
  /**
   * Closes now, as the `afterEach` would after a passing test: for a test that asserts something
   * about the closed host. The `afterEach` then has nothing left to do.
   */
  end(): Promise<void>
}

interface OpenScene {
  close(check: boolean): Promise<void>
}

const opened = new Set<OpenScene>()

export async function scene(options: SceneOptions = {}): Promise<Scene> {
  const host = await createHost(options.maxSteps === undefined ? {} : { maxSteps: options.maxSteps })
  const installed = installInvariants(host.root)
  const snapshots: Snapshot[] = [host.snapshot()]
  let isObserving = true
  const invariants: Invariants = {
    get violations() {
      return installed.violations
    },
    check: () => installed.check(),
    // a test that switches the observer off (a scenario it would flag on purpose) takes its listeners
    // out of every snapshot the close compares with
    dispose() {
      if (!isObserving) return
      isObserving = false
      const before = host.snapshot().listeners
      installed.dispose()
      const removed = before - host.snapshot().listeners
      for (const snapshot of new Set([...snapshots, result.baseline])) snapshot.listeners -= removed
    },
  }
  const fibers: Fiber[] = []
  const plugins: Plugin[] = []
  const handles: AgentHandle[] = []
  const listeners: (() => boolean)[] = []
  const loaded: Fiber[] = []
  const deferred: (() => unknown)[] = []
  let isClosed = false

  const close = async (check: boolean): Promise<void> => {
    if (isClosed) return
    isClosed = true
    opened.delete(entry)
    const failures: unknown[] = []
    const attempt = async (step: () => unknown): Promise<void> => {
      try {
        await step()
      } catch (error) {
        failures.push(error)
      }
    }
    await attempt(() => Promise.all(handles.map((handle) => handle.dispose())))
    for (const dispose of listeners) dispose()
    for (const fiber of loaded.reverse()) await attempt(() => fiber.dispose())
    // a scene that unloads the host itself has no host left to count
    const isHostLoaded = (host.root.agents as Context['agents'] | undefined) !== undefined
    if (check) {
      await attempt(() => {
        invariants.check()
        if (options.scriptUsedUp) expect(host.scripted.pending, 'unused script entries').to.equal(0)
        if (isHostLoaded) expect(host.snapshot(), 'the host after the scene').to.deep.equal(result.baseline)
      })
    }
    // what the checks did not see (a failed test, or an agent the check already reported)
    if (isHostLoaded) await attempt(() => host.root.agents.disposeAll())
    // every fiber of the scene's plugins: a test may have reloaded one under a new fiber
    for (const plugin of plugins.slice().reverse()) {
      for (const fiber of [...(host.root.registry.get(plugin)?.fibers ?? [])]) await attempt(() => fiber.dispose())
    }
    if (check && isHostLoaded && !failures.length) {
      await attempt(() => expect(host.snapshot(), 'the host after unloading the scene plugins').to.deep.equal(snapshots[0]))
    }
    if (isObserving) installed.dispose()
    isObserving = false
    for (const cleanup of deferred.reverse()) await attempt(cleanup)
    if (check && failures.length) throw failures[0]
  }
  const entry: OpenScene = { close }
  opened.add(entry)

  try {
    for (const item of options.plugins ?? []) {
      const [plugin, config] = Array.isArray(item) ? item : [item as Plugin, undefined]
      plugins.push(plugin)
      const fiber = host.root.plugin(plugin, config as never)
      fibers.push(fiber)
      await fiber
      snapshots.push(host.snapshot())
    }
  } catch (error) {
    await close(false)
    throw error
  }

  const create = async (createOptions: CreateAgentOptions = {}): Promise<AgentHandle> => {
    const handle = await host.root.agents.create({
      ...createOptions,
      agentOptions: { provider: 'scripted', model: 'test', ...createOptions.agentOptions },
    })
    handles.push(handle)
    return handle
  }

  const result: Scene = {
    ...host,
    invariants,
    baseline: snapshots[snapshots.length - 1]!,
    snapshots,
    fibers,
    create,
    async agent(agentOptions = {}, extra = {}) {
      return (await create({ ...extra, agentOptions: agentOptions as CreateAgentOptions['agentOptions'] })).agent
    },
    on: ((...args: Parameters<Context['on']>) => {
      const dispose = host.root.on(...args)
      listeners.push(dispose)
      return dispose
    }) as Context['on'],
    load(plugin, config) {
      const fiber = host.root.plugin(plugin, config as never)
      loaded.push(fiber)
      return fiber
    },
    defer(cleanup) {
      deferred.push(cleanup)
    },
    end: () => close(true),
  }
  return result
}

// the one place scenes close: a failed `expect` in a test can never skip it
if (typeof afterEach === 'function') {
  afterEach(async function closeScenes(this: Mocha.Context) {
    const check = this.currentTest?.state === 'passed'
    const scenes = [...opened]
    opened.clear()
    for (const open of scenes) {
      try {
        await open.close(check)
      } catch (error) {
        // charged to the test (mocha reports it there) rather than failing the hook, which would skip the suite's remaining tests
        ;(this.test as Mocha.Hook).error(error)
        return
      }
    }
  })
}

/** Sends `message` to `agent` and waits until its turn has ended. */
export async function runTurn(agent: Agent, message = 'hello'): Promise<void> {
  agent.followup(message)
  await agent.whenIdle()
}

/** The event types of a session, in order. */
export function typesOf(agent: Agent): string[] {
  return agent.session.events.map((event) => event.type)
}

/** The data of the last event of `type`, or `undefined`. */
export function lastOf(agent: Agent, type: string): unknown {
  return agent.session.events.findLast((event) => event.type === type)?.data
}

/**
 * Resolves with the first event of `type` appended to the agent's session after this call. Listens
 * globally, so it never creates the agent's scope context.
 */
export function nextEvent(root: Context, agent: Agent, type: string): Promise<SessionEvent> {
  return new Promise((resolve) => {
    const dispose = root.on('session/event', (session, event) => {
      if (session.id !== agent.id || event.type !== type) return
      dispose()
      resolve(event)
    })
  })
}

/** The error a promise rejects with; fails when it fulfils. */
export async function rejectionOf(promise: Promise<unknown>): Promise<Error & { code?: string; cause?: unknown }> {
  try {
    await promise
  } catch (error) {
    return error as Error
  }
  return expect.fail('expected a rejection, got a fulfilment')
}

/**
 * Calls `entry` and returns its rejection. A synchronous throw fails: every public async entry
 * must report bad input through its promise.
 */
export async function asyncRejectionOf(entry: () => Promise<unknown>): Promise<Error & { code?: string; cause?: unknown }> {
  let promise: Promise<unknown> | undefined
  expect(() => {
    promise = entry()
  }).not.to.throw()
  return rejectionOf(promise as Promise<unknown>)
}

/** The text of a result that has exactly one text block. */
export function textOf(result: ToolResult): string {
  expect(result.content).to.have.length(1)
  const block = result.content[0]!
  expect(block.type).to.equal('text')
  return (block as { text: string }).text
}

/**
 * `promise`, or a failure naming `what` when it has not settled after a few event-loop turns. For
 * microtask-driven scenes (scripted models, tools that do not wait on timers): a promise still
 * pending then never settles.
 */
export async function settles<T>(promise: Promise<T>, what: string): Promise<T> {
  let done = false
  const watched = promise.finally(() => {
    done = true
  })
  watched.catch(() => {})
  for (let i = 0; i < 20 && !done; i++) await new Promise<void>((resolve) => setImmediate(resolve))
  if (!done) expect.fail(`${what} never settled`)
  return watched
}

/** Fails unless the agent's scope holds no registration (tools, sections, hooks, guards, …). */
export function expectScopeCleared(agent: Agent, what: string): void {
  const scope = scopeOf(agent)
  if (!scope) return
  const left = (['tools', 'sections', 'hooks', 'guards', 'restrictions', 'models'] as const).filter((key) => scope[key] !== undefined)
  expect(left, `${what}: scoped registrations left`).to.deep.equal([])
}
