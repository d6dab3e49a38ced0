/**
 * One case of the fault sweep: the probe scene with one action performed at one interruption point,
 * then the teardown and every check of the suite (see `runCase`).
 */
import { expect } from 'chai'
import type { Agent, SubagentResult, SubagentRun } from '../../lib/types.ts'
import { abortedBeforePublication } from '../../plugins/inprocess-run/index.ts'
import { drain, expectedResult, expectScopeCleared, probeScene, type Scenario, settles, } from './probe.ts'

export type Action =
  | 'abort the request signal'
  | 'abort the request signal with a string reason'
  | 'dispose the run'
  | 'dispose the parent'
  | 'unload InProcessRun'
  | 'unload DepthPolicy'
  | 'unload StructuredOutput'
  | 'hot-reload InProcessRun and its dependents'
  | 'update the DepthPolicy config'

export const cancellations: readonly Action[] = [
  'abort the request signal',
  'abort the request signal with a string reason',
  'dispose the run',
  'dispose the parent',
]

export const actions: readonly Action[] = [
  ...cancellations,
  'unload InProcessRun',
  'unload DepthPolicy',
  'unload StructuredOutput',
  'hot-reload InProcessRun and its dependents',
  'update the DepthPolicy config',
]

export interface Trigger {
  /** Index of the point (0-based) at which `action` is performed. */
  readonly at: number
  readonly action: Action
}

export interface CaseRecord {
  /** Labels of the points reached, in order. */
  readonly points: readonly string[]
  readonly started: boolean
  readonly result?: SubagentResult
  /** True when a `dispose the run` trigger fired before the start fulfilled (done at fulfilment). */
  readonly deferred: boolean
}

function isOwnerDisposedError(error: unknown, parentId: string): boolean {
  return (
    error instanceof Error &&
    (error as { code?: unknown }).code === 'CREATION_ABORTED' &&
    error.message.startsWith(`owner agent "${parentId}" was disposed before agent "`)
  )
}

/**
 * Runs the scenario once, performing `trigger` (if any) at its point, then disposes the run and
 * the parent and asserts: the start either rejected with an error the action explains and left no
 * trace, or fulfilled with a result that settled once with a stop reason SPEC allows; the child,
 * its session and its scoped registrations are gone; listeners and fibers are back at baseline
 * (also after unloading every driver plugin); invariants held; nothing went unhandled or warned.
 */
export async function runCase(scenario: Scenario, trigger?: Trigger): Promise<CaseRecord> {
  const scene = await probeScene(scenario)
  const { host, plugins, parent } = scene
  const { root } = host
  const controller = new AbortController()
  const pending: Promise<unknown>[] = []
  const unhandled: unknown[] = []
  const warnings: Error[] = []
  const onUnhandled = (reason: unknown) => unhandled.push(reason)
  const onWarning = (warning: Error) => warnings.push(warning)
  process.on('unhandledRejection', onUnhandled)
  process.on('warning', onWarning)

  let run: SubagentRun | undefined
  let child: Agent | undefined
  let deferred = false
  let unloaded = false
  const ends = new Map<string, number>()
  const watchers = [
    root.on('subagent/end', (info) => ends.set(info.runId, (ends.get(info.runId) ?? 0) + 1)),
    root.on('subagent/setup', (agent) => void (child ??= agent)),
  ]

  const act = (action: Action): void => {
    switch (action) {
      case 'abort the request signal':
        controller.abort()
        return
      case 'abort the request signal with a string reason':
        controller.abort('caller gave up')
        return
      case 'dispose the run':
        if (run) pending.push(run.dispose())
        else deferred = true
        return
      case 'dispose the parent':
        pending.push(parent.dispose())
        return
      case 'unload InProcessRun':
        unloaded = true
        pending.push(plugins.run.dispose())
        return
      case 'unload DepthPolicy':
        unloaded = true
        pending.push(plugins.depth.dispose())
        return
      case 'unload StructuredOutput':
        unloaded = true
        pending.push(Promise.resolve(plugins.structured?.dispose()))
        return
      case 'hot-reload InProcessRun and its dependents':
        // a restart unloads the service, so DepthPolicy and StructuredOutput unload and reload too
        pending.push(plugins.run.restart())
        return
      case 'update the DepthPolicy config':
        pending.push(Promise.resolve(plugins.depth.update({ maxDepth: 2 })))
        return
    }
  }
  scene.arm((index) => {
    if (trigger && index === trigger.at) act(trigger.action)
  })

  try {
    const runner = root.inprocessRun
    const starting = scenario.mode === 'fork' ? runner.fork(scene.request(scenario, controller.signal)) : runner.spawn(scene.request(scenario, controller.signal))
    const started = starting.then((value) => {
      run = value
      child = value.agent
      if (deferred) pending.push(value.dispose())
      return value
    })
    let startError: unknown
    await settles(started, 'the start').catch((error) => (startError = error))

    let result: SubagentResult | undefined
    if (run) {
      let settledCount = 0
      run.result.then(
        () => settledCount++,
        () => settledCount++,
      )
      let resultError: unknown
      result = await settles(run.result, 'run.result').catch((error) => {
        resultError = error
        return undefined
      })
      if (resultError !== undefined) expect.fail(`run.result rejected with ${errorText(resultError)}`)
      await settles(run.dispose(), 'run.dispose()')
      expect(settledCount, 'run.result settled').to.equal(1)
      expect(ends.get(run.id) ?? 0, 'subagent/end emissions').to.equal(1)
      checkResult(scenario, trigger, run, result!)
    } else {
      checkStartError(trigger, startError, parent.agent.id)
    }
    await settles(parent.dispose(), 'the parent disposal')
    const outcomes = await settles(Promise.allSettled(pending), 'the triggered action')
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected') expect.fail(`the triggered action rejected with ${errorText(outcome.reason)}`)
    }
    await drain(1)
    scene.disarm()
    for (const dispose of watchers) dispose()

    if (child) {
      expect(root.agents.get(child.id), 'the child is still published').to.equal(undefined)
      expect(root.sessions.get(child.id), 'the child session is still published').to.equal(undefined)
      expectScopeCleared(child, 'child')
      expect(root.tools.get('structured_output', child), 'the capture tool outlived the child').to.equal(undefined)
      const { text } = root.systemPrompt.assemble(child)
      expect(text, 'the persona outlived the child').to.not.include('careful probe')
      expect(text, 'a setup section outlived the child').to.not.include('Probe notes')
      expect(root.tools.get('probe_scoped', child), 'a setup tool outlived the child').to.equal(undefined)
    }
    expectScopeCleared(parent.agent, 'parent')
    if (!unloaded) expect(host.snapshot(), 'leak check with the plugins loaded').to.deep.equal(scene.loaded)
    await scene.unloadAll()
    expect(host.snapshot(), 'leak check after unloading the plugins').to.deep.equal(scene.bare)
    scene.invariants.check()
    expect(host.logged(), 'host warnings').to.deep.equal([])
    await drain(1)
    expect(unhandled.map(String), 'unhandled rejections').to.deep.equal([])
    expect(warnings.map(String), 'process warnings').to.deep.equal([])
    return { points: scene.points.slice(), started: !!run, ...(result ? { result } : {}), deferred }
  } finally {
    scene.disarm()
    process.off('unhandledRejection', onUnhandled)
    process.off('warning', onWarning)
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error)
}

function checkStartError(trigger: Trigger | undefined, error: unknown, parentId: string): void {
  const message = errorText(error)
  switch (trigger?.action) {
    case 'abort the request signal':
      // an abort in the setup window rejects with the signal's reason (SPEC §1.3 (3), §2.2)
      if (error instanceof DOMException && error.name === 'AbortError') return
      if (error instanceof Error && error.message === abortedBeforePublication) return
      break
    case 'abort the request signal with a string reason':
      if (
        error instanceof Error &&
        (error as { code?: unknown }).code === 'CREATION_ABORTED' &&
        /^agent "[^"]+" creation aborted$/.test(error.message) &&
        error.cause === 'caller gave up'
      ) {
        return
      }
      break
    case 'dispose the parent':
      if (isOwnerDisposedError(error, parentId)) return
      break
  }
  expect.fail(`the start rejected with ${message}, which "${trigger?.action ?? 'no action'}" does not explain`)
}

function checkResult(scenario: Scenario, trigger: Trigger | undefined, run: SubagentRun, result: SubagentResult): void {
  const expected = expectedResult(scenario)
  const isCancellation = trigger !== undefined && cancellations.includes(trigger.action)
  if (!isCancellation) {
    expect(result, 'the result of an undisturbed run').to.deep.equal(expected)
    return
  }
  const events = run.agent.session.events.slice(run.agent.session.header.seedLength ?? 0)
  if (!events.some((event) => event.type === 'user/message')) {
    // cancelled in the gap between publication and handoff: the prompt was never sent. A signal
    // abort there has SPEC §2.3's exact result; a disposal carries §2.4's diagnostic
    const gap: SubagentResult =
      trigger.action.startsWith('abort the request signal')
        ? { output: [], stopReason: 'aborted' }
        : { output: [], stopReason: 'aborted', diagnostic: 'the run was cancelled', diagnosticText: { key: 'cancelled', params: {} } }
    expect(result, 'the result of a run cancelled before handoff').to.deep.equal(gap)
    return
  }
  expect(['aborted', 'completed'], 'stop reason of a cancelled run').to.include(result.stopReason)
  if (result.stopReason === 'completed') {
    expect(result, 'a cancelled run that completed').to.deep.equal(expected)
    const end = events.findLast((event) => event.type === 'turn/end')
    expect(end?.data, 'the turn of a completed cancelled run').to.deep.include({ reason: { kind: 'completed' } })
  } else {
    expect(result.diagnostic, 'the diagnostic of an aborted run').to.be.a('string').and.match(/^the run was cancelled/)
  }
}
