/**
 * A scene with the driver, `SubagentTool` and `Tracing` (recording to the in-memory exporter) and a
 * parent agent on the scripted model; the scene's close also checks that no span was left open.
 */
import { expect } from 'chai'
import type { Fiber } from 'cordis'
import type { Agent } from '../../lib/types.ts'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import SubagentTool from '../../plugins/subagent-tool/index.ts'
import Tracing from '../../plugins/tracing/index.ts'
import type { TestHost } from '../support/harness.ts'
import { type Scene, scene } from '../support/scene.ts'
import { type Recorder, spanRecorder } from './recorder.ts'

export interface TracingHost extends Scene {
  parent: Agent
  tracing: Fiber
  recorder: Recorder
}

export async function createTracingHost(): Promise<TracingHost> {
  const recorder = spanRecorder()
  recorder.reset()
  const host = await scene({ plugins: [InProcessRun, [SubagentTool, {}], [Tracing, {}]] })
  // after the plugins' unload: Tracing ends what it still holds when it goes
  host.defer(() => expect(recorder.open(), 'spans left open').to.equal(0))
  const parent = await host.agent()
  return Object.assign(host, { parent, tracing: host.fibers[2]!, recorder })
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
