/**
 * Fault sweeps. For each scenario, a dry run numbers every interruption point (creation,
 * setup, publication, each model part, each tool hook and body await, settle, disposal); then, for
 * every point and every action, a fresh run performs the action exactly there and `runCase` checks
 * the outcome, the teardown and the leak baseline. No timers: points are hook calls and awaits.
 */
import { expect } from 'chai'
import { type Action, actions, type CaseRecord, runCase } from './fault-case.ts'
import { expectedResult, probeCalls, type Scenario } from './probe.ts'
import '../support/unhandled.ts'

const scenarios: Scenario[] = [
  { name: 'spawn', mode: 'spawn', structured: false },
  { name: 'fork', mode: 'fork', structured: false },
  { name: 'structured spawn', mode: 'spawn', structured: true },
  { name: 'structured fork', mode: 'fork', structured: true },
  // SPEC §8.1: every action while k of n concurrent calls are in flight
  { name: 'concurrent spawn', mode: 'spawn', structured: false, concurrent: true },
  { name: 'concurrent structured spawn', mode: 'spawn', structured: true, concurrent: true },
]

const totals = { points: 0, cases: 0, rejectedStarts: 0, deferred: 0 }

describe('fault sweep: every action at every interruption point', () => {
  after(() => {
    if (process.env.RELIABILITY_REPORT) console.log(`fault sweep: ${JSON.stringify(totals)}`)
  })

  for (const scenario of scenarios) {
    describe(`${scenario.name} with persona, tool filter and ${scenario.concurrent ? `${probeCalls} concurrent tool calls` : 'a tool call'}`, () => {
      let dry: CaseRecord | undefined

      before(async () => {
        dry = await runCase(scenario)
        totals.points += dry.points.length
      })

      it('completes undisturbed and reaches every kind of point', () => {
        expect(dry!.result).to.deep.equal(expectedResult(scenario))
        const kinds = new Set(dry!.points)
        for (const kind of [
          'subagent/setup (first listener)',
          'subagent/setup (last listener)',
          'agent/created',
          'subagent/start',
          'agent/pre-step',
          'stream text-delta',
          'stream tool-call',
          'stream finish',
          'tools/pre-execute probe',
          'tool body await 1',
          'tools/result probe',
          'subagent/settle',
          'subagent/end',
          'agent/disposed',
          // the whole batch is running at once: points fall with 1, 2 and all of its calls in flight
          ...(scenario.concurrent ? Array.from({ length: probeCalls }, (_, i) => `probe calls in flight: ${i + 1}`) : []),
        ]) {
          expect(kinds, kind).to.include(kind)
        }
      })

      for (const action of actions) {
        it(`settles or rejects cleanly when it must ${action} at any point`, async () => {
          const failures: string[] = []
          for (let at = 0; at < dry!.points.length; at++) {
            totals.cases++
            try {
              const record = await runCase(scenario, { at, action: action as Action })
              if (!record.started) totals.rejectedStarts++
              if (record.deferred) totals.deferred++
            } catch (error) {
              failures.push(`point ${at} (${dry!.points[at]}): ${error instanceof Error ? error.message : String(error)}`)
            }
          }
          expect(failures, failures.join('\n')).to.deep.equal([])
        })
      }
    })
  }
})
