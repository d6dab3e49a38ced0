/**
 * Properties of the tree budget over random delegation trees with random cancellations and
 * failures (SPEC §9):
 * 1. `usage(root)` equals the sum of every agent's own message usage, and each run's `treeUsage`
 *    equals the sum over its subtree: every `assistant/message` counted exactly once.
 * 2. No model request is sent on a spent budget, children never exceed `maxChildren`, and tokens
 *    overrun `maxTokens` by at most the requests in flight when the limit was reached.
 */
import { expect } from 'chai'
import fc from 'fast-check'
import type { Agent, ModelRequest, StreamPart, SubagentRun, Usage } from '../../lib/types.ts'
import type { TreeBudget as TreeBudgetService } from '../../plugins/tree-budget/index.ts'
import { createBudgetFixture } from './fixture.ts'

interface NodePlan {
  first: Usage
  second: Usage
  fate: 'ok' | 'fail' | 'cancel'
  children: NodePlan[]
}

const usage = fc.record({ inputTokens: fc.nat(20), outputTokens: fc.nat(5) })
const fate = fc.constantFrom<NodePlan['fate']>('ok', 'ok', 'fail', 'cancel')
const { node } = fc.letrec<{ node: NodePlan }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({ first: usage, second: usage, fate, children: fc.constant<NodePlan[]>([]) }),
    fc.record({ first: usage, second: usage, fate, children: fc.array(tie('node'), { minLength: 1, maxLength: 3 }) }),
  ),
}))
const limits = fc.record(
  {
    maxConcurrent: fc.integer({ min: 1, max: 3 }),
    maxChildren: fc.nat(8),
    maxTokens: fc.nat(200),
    maxModelRequests: fc.nat(20),
  },
  { requiredKeys: ['maxConcurrent'] },
)

function promptOf(request: ModelRequest): string {
  const first = request.messages.find((message) => message.role === 'user')
  const block = first?.content[0]
  return block?.type === 'text' ? block.text : ''
}

function add(total: Usage, part: Usage): void {
  total.inputTokens += part.inputTokens
  total.outputTokens += part.outputTokens
}

describe('TreeBudget properties (SPEC §9)', function () {
  this.timeout(120_000)

  it('counts every message once and never sends a request on a spent budget', async () => {
    await fc.assert(
      fc.asyncProperty(node, limits, async (rootPlan, config) => {
        const fixture = await createBudgetFixture({ budget: config })
        const { root: ctx } = fixture.host
        const budget: TreeBudgetService = fixture.budget
        // the root has no run to cancel: its cancellation is a failure
        const plans = new Map<string, NodePlan>([['n', { ...rootPlan, fate: rootPlan.fate === 'cancel' ? 'fail' : rootPlan.fate }]])
        const controllers = new Map<string, AbortController>()
        const own = new Map<string, Usage>()
        const parentOf = new Map<string, string>()
        const treeUsages: { id: string; treeUsage?: Usage }[] = []
        // per agent (one request at a time each): the usage its request in flight will report,
        // from the send until its message is appended
        const inFlight = new Map<string, Usage>()
        let reachedWith: Usage[] | undefined
        let sent = 0
        let treeRoot: Agent | undefined

        const registrations: (() => void)[] = []
        const off = ctx.on('session/event', (session, event) => {
          if (session.header.parentSession) parentOf.set(session.id, session.header.parentSession)
          if (event.type !== 'assistant/message') return
          const message = event.data as { usage?: Usage }
          inFlight.delete(session.id)
          if (!message.usage) return
          if (!own.has(session.id)) own.set(session.id, { inputTokens: 0, outputTokens: 0 })
          add(own.get(session.id)!, message.usage)
          const used = budget.usage(treeRoot!)
          if (!reachedWith && config.maxTokens !== undefined && used.inputTokens + used.outputTokens >= config.maxTokens) {
            reachedWith = [message.usage, ...inFlight.values()]
          }
        })
        registrations.push(off)
        registrations.push(ctx.tools.register({
          name: 'noop',
          description: 'n',
          parameters: { type: 'object' },
          execute: () => 'ok',
        }))
        registrations.push(ctx.tools.register({
          name: 'fanout',
          description: 'starts the planned children',
          parameters: { type: 'object' },
          async execute(_args, exec) {
            const parent = exec.agent as Agent
            const id = promptOfAgent(parent)
            const plan = plans.get(id)!
            const starts = plan.children.map(async (child, index) => {
              const childId = `${id}.${index}`
              plans.set(childId, child)
              const controller = new AbortController()
              controllers.set(childId, controller)
              let run: SubagentRun
              try {
                run = await ctx.inprocessRun.spawn({ parent, prompt: childId, signal: controller.signal })
              } catch {
                return
              }
              const result = await run.result
              treeUsages.push({ id: run.id, treeUsage: result.treeUsage })
              await run.dispose()
            })
            await Promise.all(starts)
            return 'children done'
          },
        }))
        const steps = new Map<string, number>()
        const offModel = ctx.models.register('plan', {
          async *stream(request): AsyncGenerator<StreamPart> {
            sent++
            const now = budget.usage(treeRoot!)
            // the request was counted as it was sent: it may be the last one allowed, never one more
            if (config.maxModelRequests !== undefined) expect(now.modelRequests).to.be.at.most(config.maxModelRequests)
            if (config.maxTokens !== undefined) expect(now.inputTokens + now.outputTokens).to.be.below(config.maxTokens)
            const id = promptOf(request)
            const plan = plans.get(id)!
            const step = (steps.get(request.agent.id) ?? 0) + 1
            steps.set(request.agent.id, step)
            const reported = step === 1 ? plan.first : plan.second
            // a failed or cancelled request ends without usage
            inFlight.set(request.agent.id, step === 1 || plan.fate === 'ok' ? reported : { inputTokens: 0, outputTokens: 0 })
            await Promise.resolve()
            if (step === 1) {
              if (plan.children.length) yield { type: 'tool-call', id: 'f', name: 'fanout', arguments: '{}' }
              else if (plan.fate !== 'ok') yield { type: 'tool-call', id: 'x', name: 'noop', arguments: '{}' }
              else yield { type: 'text-delta', text: 'done' }
              yield { type: 'finish', reason: 'stop', usage: plan.first }
              return
            }
            if (plan.fate === 'fail') throw new Error('boom')
            if (plan.fate === 'cancel') {
              const aborted = new Promise((_, reject) => request.signal.addEventListener('abort', () => reject(request.signal.reason), { once: true }))
              controllers.get(id)?.abort()
              await aborted
            }
            yield { type: 'text-delta', text: 'done' }
            yield { type: 'finish', reason: 'stop', usage: plan.second }
          },
        })
        registrations.push(offModel)
        const rootHandle = await ctx.agents.create({ agentOptions: { provider: 'plan', model: 'm' } })
        const rootAgent = rootHandle.agent
        treeRoot = rootAgent
        const prompt = 'n'
        rootAgent.followup(prompt)
        await rootAgent.whenIdle()

        // 1. exact roll-up
        const total = { inputTokens: 0, outputTokens: 0 }
        for (const part of own.values()) add(total, part)
        const rootUsage = budget.usage(rootAgent)
        expect({ inputTokens: rootUsage.inputTokens, outputTokens: rootUsage.outputTokens }).to.deep.equal(total)
        expect(rootUsage.modelRequests).to.equal(sent)
        for (const { id, treeUsage } of treeUsages) {
          const subtree = { inputTokens: 0, outputTokens: 0 }
          for (const [agentId, part] of own) if (isInSubtree(agentId, id, parentOf)) add(subtree, part)
          expect(treeUsage).to.deep.equal(subtree)
        }
        // 2. limits
        if (config.maxChildren !== undefined) expect(rootUsage.children).to.be.at.most(config.maxChildren)
        if (config.maxTokens !== undefined) {
          const overrun = (reachedWith ?? []).reduce((sum, part) => sum + part.inputTokens + part.outputTokens, 0)
          expect(rootUsage.inputTokens + rootUsage.outputTokens).to.be.at.most(config.maxTokens + overrun)
        }
        await rootHandle.dispose()
        for (const dispose of registrations) dispose()
        await fixture.close()
      }),
      { numRuns: 40 },
    )
  })
})

function promptOfAgent(agent: Agent): string {
  const message = agent.session.events.find((event) => event.type === 'user/message')
  const block = (message?.data as { content: { type: string; text?: string }[] } | undefined)?.content[0]
  return block?.type === 'text' ? (block.text ?? '') : ''
}

function isInSubtree(agentId: string, rootId: string, parentOf: Map<string, string>): boolean {
  for (let at: string | undefined = agentId; at; at = parentOf.get(at)) if (at === rootId) return true
  return false
}
