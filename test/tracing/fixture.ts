/**
 * A host with the driver, `SubagentTool` and `Tracing` (recording to the in-memory exporter), the
 * host invariants, and a parent agent on the scripted model.
 */
import { expect } from 'chai'
import type { Fiber } from 'cordis'
import type { Agent, AgentHandle } from '../../lib/types.ts'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import SubagentTool from '../../plugins/subagent-tool/index.ts'
import Tracing from '../../plugins/tracing/index.ts'
import { createHost, type Snapshot, type TestHost } from '../support/harness.ts'
import { installInvariants, type Invariants } from '../support/invariants.ts'
import { type Recorder, spanRecorder } from './recorder.ts'
import '../support/unhandled.ts'

export interface TracingHost extends TestHost {
  parent: Agent
  tracing: Fiber
  recorder: Recorder
  /** Disposes the parent and the plugin; checks invariants, open spans and the host baseline. */
  close(): Promise<void>
}

export async function createTracingHost(): Promise<TracingHost> {
  const recorder = spanRecorder()
  recorder.reset()
  const host = await createHost()
  await host.root.plugin(InProcessRun)
  await host.root.plugin(SubagentTool, {} as SubagentTool.Config)
  const invariants: Invariants = installInvariants(host.root)
  const baseline: Snapshot = host.snapshot()
  const tracing = host.root.plugin(Tracing, {})
  await tracing
  const handle: AgentHandle = await host.root.agents.create({ agentOptions: { provider: 'scripted', model: 'test' } })
  return {
    ...host,
    parent: handle.agent,
    tracing,
    recorder,
    async close() {
      await handle.dispose()
      await tracing.dispose()
      invariants.check()
      expect(recorder.open(), 'spans left open').to.equal(0)
      expect(host.snapshot()).to.deep.equal(baseline)
      invariants.dispose()
    },
  }
}

/** Resolves when the agent `id` has streamed its first text (its request is in flight). */
export function firstDelta(host: TestHost, id: string): Promise<void> {
  return new Promise<void>((resolve) => {
    const off = host.root.on('session/event', (session, event) => {
      if (session.id !== id || event.type !== 'assistant/delta') return
      off()
      resolve()
    })
  })
}
