/**
 * One integration scenario on a fresh test host: the invariant observer is installed and the
 * leak-check baseline taken before anything else happens; `end()` disposes what the scene created,
 * checks the invariants and asserts the host is back at its baseline.
 */
import { expect } from 'chai'
import type { Context } from 'cordis'
import type { Agent, AgentHandle, CreateAgentOptions, SessionEvent } from '../../lib/types.ts'
import { createHost, type Snapshot, type TestHost } from '../support/harness.ts'
import { type Invariants, installInvariants } from '../support/invariants.ts'
import '../support/unhandled.ts'

export interface Scene extends TestHost {
  invariants: Invariants
  baseline: Snapshot
  /** Creates a published agent on the scripted model (`scripted`/`test` unless overridden). */
  create(options?: CreateAgentOptions): Promise<AgentHandle>
  /** A global listener on the root context, removed by `end()`. */
  on: Context['on']
  /** Disposes every handle `create` made, removes `on` listeners, checks invariants and baseline. */
  end(): Promise<void>
}

export async function scene(config: { maxSteps?: number } = {}): Promise<Scene> {
  const host = await createHost(config)
  const invariants = installInvariants(host.root)
  const baseline = host.snapshot()
  const handles: AgentHandle[] = []
  const listeners: (() => boolean)[] = []
  return {
    ...host,
    invariants,
    baseline,
    async create(options = {}) {
      const handle = await host.root.agents.create({
        ...options,
        agentOptions: { provider: 'scripted', model: 'test', ...options.agentOptions },
      })
      handles.push(handle)
      return handle
    },
    on: ((...args: Parameters<Context['on']>) => {
      const dispose = host.root.on(...args)
      listeners.push(dispose)
      return dispose
    }) as Context['on'],
    async end() {
      await Promise.all(handles.map((handle) => handle.dispose()))
      for (const dispose of listeners) dispose()
      invariants.check()
      expect(host.snapshot()).to.deep.equal(baseline)
    },
  }
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
