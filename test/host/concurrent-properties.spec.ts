/**
 * Properties of concurrent tool calls (SPEC §8.1) over arbitrary steps: any mix of concurrent and
 * non-concurrent calls, finishing in any order (bodies wait a chosen number of microtasks, some
 * throw). No timers.
 */
import { expect } from 'chai'
import fc from 'fast-check'
import type { ToolExecution } from '../../lib/types.ts'
import { scene } from '../support/scene.ts'

interface PlannedCall {
  concurrent: boolean
  /** Microtasks the body waits before it returns (at least one). */
  waits: number
  throws: boolean
}

const plannedCall: fc.Arbitrary<PlannedCall> = fc.record({
  concurrent: fc.boolean(),
  waits: fc.integer({ min: 1, max: 6 }),
  throws: fc.boolean(),
})

interface Span {
  start: number
  end: number
}

describe('concurrent tool calls: properties (SPEC §8.1)', () => {
  it('overlaps calls only within a run of concurrent ones, runs each such run at once, and records in model order', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(plannedCall, { minLength: 1, maxLength: 8 }), async (plan) => {
        const s = await scene()
        let clock = 0
        const spans: Span[] = plan.map(() => ({ start: -1, end: -1 }))
        const body = async (args: { i: number }, _exec: ToolExecution) => {
          const { i } = args
          spans[i].start = clock++
          try {
            for (let k = 0; k < plan[i].waits; k++) await Promise.resolve()
            if (plan[i].throws) throw new Error(`call ${i} failed`)
            return `call ${i} ok`
          } finally {
            spans[i].end = clock++
          }
        }
        const parameters = { type: 'object', properties: { i: { type: 'integer' } }, required: ['i'] }
        s.root.tools.register({ name: 'par', description: 'par', parameters, concurrent: true, execute: body })
        s.root.tools.register({ name: 'seq', description: 'seq', parameters, execute: body })
        const { agent } = await s.create()
        const toolCalls = plan.map((call, i) => ({ id: `c${i}`, name: call.concurrent ? 'par' : 'seq', arguments: { i } }))
        s.scripted.push({ toolCalls }, { text: 'done' })
        agent.followup('go')
        await agent.whenIdle()

        // model order, each call's own outcome
        const results = agent.session.events.filter((event) => event.type === 'tool/result').map((event) => event.data)
        expect(results).to.deep.equal(
          plan.map((call, i) => ({
            turn: 1,
            step: 1,
            callId: `c${i}`,
            name: call.concurrent ? 'par' : 'seq',
            isError: call.throws,
            content: [{ type: 'text', text: call.throws ? `Error: call ${i} failed` : `call ${i} ok` }],
          })),
        )
        const overlaps = (a: Span, b: Span) => a.start < b.end && b.start < a.end
        for (let i = 0; i < plan.length; i++) {
          for (let j = i + 1; j < plan.length; j++) {
            const sameRun = plan.slice(i, j + 1).every((call) => call.concurrent)
            // calls overlap only inside one run of consecutive concurrent calls…
            if (!sameRun) expect(overlaps(spans[i], spans[j]), `c${i} and c${j} overlap`).to.equal(false)
            // …and inside one, none waits for another: every body starts before any of them ends
            if (sameRun) expect(spans[j].start, `c${j} waited for c${i}`).to.be.lessThan(spans[i].end)
          }
        }
        expect(s.scripted.requests[1].messages.slice(2).map((message) => (message as { callId: string }).callId)).to.deep.equal(
          plan.map((_, i) => `c${i}`),
        )
        await s.end()
      }),
      { numRuns: 100 },
    )
  })
})
