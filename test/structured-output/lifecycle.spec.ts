import { expect } from 'chai'
import type { Agent, Session, SessionEvent, SubagentRun } from '../../lib/types.ts'
import type { PreStepDecision } from '../../plugins/host/index.ts'
import StructuredOutput, { CANCELLED_BEFORE_CAPTURE, MISSING_CAPTURE } from '../../plugins/structured-output/index.ts'
import { call, createFixture, type Fixture } from './fixture.ts'
import { rejectionOf } from '../support/scene.ts'

interface StepGate {
  /** Resolves once a child waits at its first step. */
  entered: Promise<void>
  open(): void
  dispose(): void
}

/** Holds every agent at `agent/pre-step` until `open()`, so a run stays live without timers. */
function holdSteps(fixture: Fixture): StepGate {
  let open!: () => void
  const opened = new Promise<void>((resolve) => (open = resolve))
  let enter!: () => void
  const entered = new Promise<void>((resolve) => (enter = resolve))
  const dispose = fixture.host.root.on(
    'agent/pre-step',
    (_agent: Agent, _info: unknown, next: () => PreStepDecision | Promise<PreStepDecision>) => {
      enter()
      return opened.then(next)
    },
  )
  return { entered, open, dispose }
}

describe('StructuredOutput lifecycle', () => {
  describe('unloading the plugin mid-run', () => {
    it('keeps the started run capturing and leaves nothing behind after dispose', async () => {
      const fixture = await createFixture()
      const gate = holdSteps(fixture)
      fixture.host.scripted.push({ toolCalls: [call('structured_output', { answer: 5 }), call('structured_output', { answer: 6 })] })
      const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
      await gate.entered
      await fixture.unload()
      gate.open()
      const result = await run.result
      gate.dispose()
      expect(result.stopReason).to.equal('completed')
      expect(result.structured).to.deep.equal({ answer: 5 })
      expect(fixture.host.scripted.requests).to.have.length(1)
      await run.dispose()
    })

    it('still turns a prose finish into error', async () => {
      const fixture = await createFixture()
      const gate = holdSteps(fixture)
      fixture.host.scripted.push({ text: 'prose' })
      const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
      await gate.entered
      await fixture.unload()
      gate.open()
      const result = await run.result
      gate.dispose()
      expect(result.stopReason).to.equal('error')
      expect(result.diagnostic).to.equal(MISSING_CAPTURE)
      await run.dispose()
    })

    it('keeps a child whose setup window was open during the unload', async () => {
      const fixture = await createFixture()
      const off = fixture.host.root.on('subagent/setup', () => fixture.unload())
      fixture.host.scripted.push({ toolCalls: [call('structured_output', { answer: 8 })] })
      const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
      off()
      const result = await run.result
      expect(result.stopReason).to.equal('completed')
      expect(result.structured).to.deep.equal({ answer: 8 })
      await run.dispose()
    })

    it('takes its driver-hook listeners out of the root table when unloaded', async () => {
      const fixture = await createFixture()
      const hooks = (fixture.host.root.events as unknown as { _hooks: Record<string, unknown[] | undefined> })._hooks
      const names = ['subagent/prepare', 'subagent/setup', 'subagent/settle', 'subagent/end']
      const loaded = names.map((name) => hooks[name]?.length ?? 0)
      await fixture.unload()
      expect(names.map((name) => hooks[name]?.length ?? 0)).to.deep.equal(loaded.map((count) => count - 1))
    })

    it('rejects a later outputSchema start', async () => {
      const fixture = await createFixture()
      await fixture.unload()
      const error = await rejectionOf(fixture.host.root.inprocessRun.spawn(fixture.request()))
      expect((error as Error).message).to.equal('subagent runtime does not support the "outputSchema" capability')
    })

    it('settles a run across a hot reload, and the reloaded plugin serves new starts', async () => {
      const fixture = await createFixture()
      const gate = holdSteps(fixture)
      fixture.host.scripted.push({ toolCalls: [call('structured_output', { answer: 1 })] })
      const first = await fixture.host.root.inprocessRun.spawn(fixture.request())
      await gate.entered
      await fixture.unload()
      await fixture.reload()
      gate.open()
      expect((await first.result).structured).to.deep.equal({ answer: 1 })
      gate.dispose()
      fixture.host.scripted.push({ toolCalls: [call('structured_output', { answer: 2 })] })
      const second = await fixture.host.root.inprocessRun.spawn(fixture.request())
      expect((await second.result).structured).to.deep.equal({ answer: 2 })
      await Promise.all([first.dispose(), second.dispose()])
    })
  })

  describe('restarting with many live runs', () => {
    const LIVE = 40

    /** `subagent/settle` listeners in the root's table. */
    function settleListeners(fixture: Fixture): number {
      const hooks = (fixture.host.root.events as unknown as { _hooks: Record<string, unknown[] | undefined> })._hooks
      return hooks['subagent/settle']?.length ?? 0
    }

    /** Starts LIVE structured runs and resolves once every child waits at its first step. */
    async function startHeld(fixture: Fixture): Promise<{ runs: SubagentRun[]; open(): void; dispose(): void }> {
      let waiting = 0
      let allWaiting!: () => void
      const reached = new Promise<void>((resolve) => (allWaiting = resolve))
      let open!: () => void
      const opened = new Promise<void>((resolve) => (open = resolve))
      const dispose = fixture.host.root.on(
        'agent/pre-step',
        (_agent: Agent, _info: unknown, next: () => PreStepDecision | Promise<PreStepDecision>) => {
          if (++waiting === LIVE) allWaiting()
          return opened.then(next)
        },
      )
      for (let i = 0; i < LIVE; i++) fixture.host.scripted.push({ toolCalls: [call('structured_output', { answer: i })] })
      const runs: SubagentRun[] = []
      for (let i = 0; i < LIVE; i++) runs.push(await fixture.host.root.inprocessRun.spawn(fixture.request()))
      await reached
      return { runs, open, dispose }
    }

    it('answers for every run it leaves behind with one settle listener, not one per run', async () => {
      const fixture = await createFixture()
      const held = await startHeld(fixture)
      await fixture.unload()
      expect(settleListeners(fixture)).to.equal(1)
      held.open()
      const results = await Promise.all(held.runs.map((run) => run.result))
      held.dispose()
      expect(results.map((result) => result.structured)).to.deep.equal(held.runs.map((_run, i) => ({ answer: i })))
      expect(settleListeners(fixture)).to.equal(0)
      await Promise.all(held.runs.map((run) => run.dispose()))
    })

    it('adopts no run whose result already rejected, so nothing stays on the root', async () => {
      const fixture = await createFixture()
      const off = fixture.host.root.on('subagent/setup', (child) => {
        ;(child as unknown as { followup: () => void }).followup = () => {
          throw new Error('queue is broken')
        }
      })
      const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
      off()
      const error = await rejectionOf(run.result)
      expect((error as Error).message).to.equal('queue is broken')
      await fixture.unload()
      expect(settleListeners(fixture)).to.equal(0)
      await run.dispose()
    })

    it('keeps one settle listener for the runs of several unloaded instances', async () => {
      const fixture = await createFixture()
      const held = await startHeld(fixture)
      await fixture.unload()
      await fixture.reload()
      await fixture.unload()
      expect(settleListeners(fixture)).to.equal(1)
      held.open()
      const results = await Promise.all(held.runs.map((run) => run.result))
      held.dispose()
      expect(results.every((result, i) => result.stopReason === 'completed' && (result.structured as { answer: number }).answer === i)).to.equal(true)
      await Promise.all(held.runs.map((run) => run.dispose()))
    })
  })

  describe('cancellation', () => {
    it('reports aborted when the run was cancelled after a prose finish', async () => {
      const fixture = await createFixture()
      const gate = holdSteps(fixture)
      fixture.host.scripted.push({ text: 'prose' })
      const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
      await gate.entered
      let disposal: Promise<void> | undefined
      // cancel between the turn's end and the result: the turn itself completed
      const off = fixture.host.root.on('session/event', (session: Session, event: SessionEvent) => {
        if (session.id === run.id && event.type === 'turn/end') disposal = run.dispose()
      })
      gate.open()
      const result = await run.result
      off()
      gate.dispose()
      expect(result).to.deep.equal({
        output: [{ type: 'text', text: 'prose' }],
        stopReason: 'aborted',
        diagnostic: 'the run was cancelled before the child called structured_output successfully',
        diagnosticText: { key: 'cancelledBeforeCapture', params: {} },
      })
      expect(CANCELLED_BEFORE_CAPTURE).to.equal(result.diagnostic)
      await disposal
    })

    it('keeps the driver’s aborted result when the signal aborts mid-turn', async () => {
      const fixture = await createFixture()
      fixture.host.scripted.push('hang')
      const controller = new AbortController()
      const run = await fixture.host.root.inprocessRun.spawn(fixture.request({ signal: controller.signal }))
      controller.abort()
      const result = await run.result
      expect(result.stopReason).to.equal('aborted')
      expect(result.diagnostic).to.equal('the run was cancelled (parent)')
      expect(result).to.not.have.property('structured')
      await run.dispose()
    })
  })

  describe('leaks', () => {
    it('leaves no agent, session, listener or fiber behind after many captures', async () => {
      const fixture = await createFixture()
      const ids: string[] = []
      for (let i = 0; i < 20; i++) {
        fixture.host.scripted.push({ toolCalls: [call('structured_output', { answer: i })] })
        const run = await fixture.host.root.inprocessRun.spawn(fixture.request())
        expect((await run.result).structured).to.deep.equal({ answer: i })
        ids.push(run.id)
        await run.dispose()
      }
      for (const id of ids) expect(fixture.host.root.agents.get(id)).to.equal(undefined)
    })

    it('rolls back its registrations when a later setup listener rejects the start', async () => {
      const fixture = await createFixture()
      // the child's scope lives under the parent's, which is made on first use
      void fixture.parent.ctx
      const before = fixture.host.snapshot()
      let child: Agent | undefined
      const off = fixture.host.root.on('subagent/setup', (agent: Agent) => {
        child = agent
        throw new Error('setup refused')
      })
      const error = await rejectionOf(fixture.host.root.inprocessRun.spawn(fixture.request()))
      off()
      expect((error as Error).message).to.equal('setup refused')
      expect(fixture.host.snapshot()).to.deep.equal(before)
      expect(fixture.host.root.tools.get('structured_output', child)).to.equal(undefined)
    })
  })

  it('is a loadable plugin with an empty config', () => {
    expect(StructuredOutput.inject).to.deep.equal(['inprocessRun', 'agents', 'tools'])
    expect(StructuredOutput.Config({})).to.deep.equal({})
  })
})
