/**
 * Fault sweep for background children (SPEC §8.2): a parent starts one background child
 * through the `subagent` tool; the child calls a tool, answers, and its result is delivered to the
 * parent, which answers in turn. A dry run numbers every interruption point on that path (hooks,
 * the tool body, each model call, the parent's session events); then for every point and every
 * action a fresh host performs the action exactly there. Each case must deliver at most once
 * (exactly once unless the parent was disposed), and leave no agent, session, listener, fiber or
 * pending background run behind, with the host invariants intact. No timers.
 */
import { expect } from 'chai'
import type { Fiber } from 'cordis'
import { BACKGROUND_DELIVERED_EVENT, BACKGROUND_START_EVENT } from '../../lib/delegation/background-record.ts'
import type { Agent, AgentHandle, ContentBlock, ModelRequest } from '../../lib/types.ts'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import type { ScriptedResponse } from '../../plugins/scripted-model/index.ts'
import SubagentTool, { backgroundSettled } from '../../plugins/subagent-tool/index.ts'
import { createHost } from '../support/harness.ts'
import { installInvariants } from '../support/invariants.ts'
import '../support/unhandled.ts'

type Action = 'dispose the parent' | 'cancel the parent turn' | 'cancel the child' | 'unload SubagentTool' | 'hot-reload SubagentTool'

const actions: readonly Action[] = [
  'dispose the parent',
  'cancel the parent turn',
  'cancel the child',
  'unload SubagentTool',
  'hot-reload SubagentTool',
]

const DELIVERY = /^Background subagent "bg" \(run [0-9a-f-]+\) finished:\n/

interface CaseRecord {
  points: string[]
  /** Background runs the parent's session records as started. */
  started: number
  deliveries: string[]
  parentDisposed: boolean
}

function lastUserText(request: ModelRequest): string {
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const message = request.messages[i]!
    if (message.role === 'user') return (message.content[0] as { text: string }).text
  }
  return ''
}

async function runCase(trigger?: { at: number; action: Action }): Promise<CaseRecord> {
  const host = await createHost()
  const { root } = host
  await root.plugin(InProcessRun)
  let toolFiber: Fiber = root.plugin(SubagentTool)
  await toolFiber
  const offProbeTool = root.tools.register({
    name: 'probe',
    description: 'a tool the child calls',
    parameters: { type: 'object' },
    execute: async () => {
      point('tool body')
      await Promise.resolve()
      point('tool body after await')
      return 'probed'
    },
  })
  const invariants = installInvariants(root)
  const baseline = host.snapshot()
  const points: string[] = []
  let parentHandle: AgentHandle | undefined
  let parentDisposed = false
  let reload: Promise<unknown> = Promise.resolve()

  function point(label: string): void {
    const at = points.length
    points.push(label)
    if (!trigger || trigger.at !== at) return
    const parent = parentHandle?.agent
    switch (trigger.action) {
      case 'dispose the parent':
        parentDisposed = true
        void parentHandle?.dispose()
        return
      case 'cancel the parent turn':
        parent?.cancel({ kind: 'user' })
        return
      case 'cancel the child':
        for (const agent of root.agents.list()) if (agent !== parent) agent.cancel({ kind: 'user' })
        return
      case 'unload SubagentTool':
        reload = toolFiber.dispose()
        return
      case 'hot-reload SubagentTool': {
        const old = toolFiber
        reload = old.dispose().then(async () => {
          toolFiber = root.plugin(SubagentTool)
          await toolFiber
        })
        return
      }
    }
  }

  const reply = (request: ModelRequest): ScriptedResponse => {
    const isChild = request.agent !== parentHandle?.agent
    point(isChild ? 'child model call' : 'parent model call')
    if (isChild) return request.messages.at(-1)?.role === 'tool' ? { text: 'child done' } : { toolCalls: [{ name: 'probe', arguments: {} }] }
    if (request.messages.at(-1)?.role === 'tool') return { text: 'started' }
    if (DELIVERY.test(lastUserText(request))) return { text: 'got the result' }
    return { toolCalls: [{ id: 'call_bg', name: 'subagent', arguments: { prompt: 'background task', label: 'bg', background: true } }] }
  }
  host.scripted.repeat(reply)

  const offs = [
    root.on('subagent/start', () => point('subagent/start')),
    root.on('subagent/settle', (_result, _run, next) => {
      point('subagent/settle')
      return next()
    }),
    root.on('subagent/end', () => point('subagent/end')),
    root.on('tools/result', (exec) => point(`tools/result ${exec.name}`)),
    root.on('agent/created', () => point('agent/created')),
    root.on('session/event', (session, event) => {
      if (session.id !== parentHandle?.agent.id) return
      if (event.type === BACKGROUND_START_EVENT || event.type === BACKGROUND_DELIVERED_EVENT || event.type === 'turn/end') {
        point(`parent ${event.type}`)
      } else if (event.type === 'user/message' && (event.data as { source: { kind: string } }).source.kind === 'plugin') {
        point('parent plugin message')
      }
    }),
  ]

  parentHandle = await root.agents.create({ agentOptions: { provider: 'scripted', model: 'sweep' } })
  const parent: Agent = parentHandle.agent
  parent.followup('start a background child')
  // quiescence: the turn, every background delivery, the turn it starts, any reload in flight
  for (;;) {
    await parent.whenIdle()
    await backgroundSettled()
    await reload
    if (parent.status === 'idle' && !root.agents.list().some((agent) => agent !== parent)) break
  }
  const deliveries = parent.session.events
    .filter((event) => event.type === 'user/message' && (event.data as { source: { kind: string } }).source.kind === 'plugin')
    .map((event) => ((event.data as { content: ContentBlock[] }).content[0] as { text: string }).text)

  const started = parent.session.events.filter((event) => event.type === BACKGROUND_START_EVENT).length

  await parentHandle.dispose()
  await backgroundSettled()
  for (const off of offs) off()
  offProbeTool()
  host.scripted.repeat(undefined)
  expect(backgroundPendingFor(root, parent)).to.deep.equal([])
  // an unloaded tool plugin comes back, so the baseline (taken with it loaded) applies
  if (!root.get('subagentTool')) {
    toolFiber = root.plugin(SubagentTool)
    await toolFiber
  }
  invariants.check()
  expect(host.snapshot()).to.deep.equal(baseline)
  invariants.dispose()
  await toolFiber.dispose()
  return { points, started, deliveries, parentDisposed }
}

function backgroundPendingFor(root: Awaited<ReturnType<typeof createHost>>['root'], parent: Agent): unknown[] {
  const service = root.get('subagentTool') as { pending(agent: Agent): unknown[] } | undefined
  return service ? service.pending(parent) : []
}

describe('fault sweep: background children at every interruption point', () => {
  let dry: CaseRecord | undefined

  before(async () => {
    dry = await runCase()
  })

  it('delivers once undisturbed and reaches every kind of point', () => {
    expect(dry!.started).to.equal(1)
    expect(dry!.deliveries).to.have.length(1)
    expect(dry!.deliveries[0]).to.match(DELIVERY)
    expect(dry!.deliveries[0]!.endsWith('finished:\nchild done')).to.equal(true)
    for (const kind of [
      'parent model call',
      'subagent/start',
      `parent ${BACKGROUND_START_EVENT}`,
      'child model call',
      'tool body',
      'tools/result probe',
      'tools/result subagent',
      'subagent/settle',
      'subagent/end',
      'parent plugin message',
      `parent ${BACKGROUND_DELIVERED_EVENT}`,
    ]) {
      expect(dry!.points, kind).to.include(kind)
    }
  })

  for (const action of actions) {
    it(`delivers at most once and leaves nothing behind when it must ${action} at any point`, async () => {
      const failures: string[] = []
      for (let at = 0; at < dry!.points.length; at++) {
        try {
          const record = await runCase({ at, action })
          expect(record.started, 'background starts').to.be.at.most(1)
          expect(record.deliveries.length, 'deliveries').to.be.at.most(record.started)
          for (const text of record.deliveries) expect(text).to.match(DELIVERY)
          // an interrupted start (tool unloaded, turn cancelled first) starts nothing; a start always delivers to a live parent
          if (!record.parentDisposed) expect(record.deliveries.length, 'deliveries to a live parent').to.equal(record.started)
        } catch (error) {
          failures.push(`point ${at} (${dry!.points[at]}): ${error instanceof Error ? error.message : String(error)}`)
        }
      }
      expect(failures, failures.join('\n')).to.deep.equal([])
    })
  }
})
