import { expect } from 'chai'
import fc from 'fast-check'
import { parentDepth } from '../../../lib/delegation/depth.ts'
import { forkSeed } from '../../../lib/session/fork-seed.ts'
import { readResult } from '../../../lib/session/read-result.ts'
import { englishDiagnostic } from '../../../locales/index.ts'
import type { ContentBlock, SessionEvent, TurnEndReason, Usage } from '../../../lib/types.ts'

/** What the driver reads: diagnostics rendered in en-US, as `SubagentResult.diagnostic` carries them. */
function readInEnglish(events: readonly SessionEvent[], seedLength: number, cancelled: boolean) {
  return readResult(events, seedLength, cancelled, englishDiagnostic)
}

// Invariants:
// - forkSeed returns a prefix of the log that is empty or ends with a `turn/end`, leaves no
//   `turn/end` behind it, and has balanced `turn/start` / `turn/end` pairs.
// - readResult reads only the child's own events: text that appears only in the seed never shows up,
//   the result equals that of the own events alone, and usage sums own messages only.
// - a cancelled run is `completed` or `aborted`; every non-completed result has a diagnostic of at
//   most 4096 UTF-8 bytes.

const numRuns = 200

interface StepPlan { deltas: string[]; content: string | null; usage: Usage | null }
interface TurnPlan { steps: StepPlan[]; end: TurnEndReason | null }

// own and seed texts use disjoint alphabets, so a seed marker can never appear in own text
const word = fc.string({ unit: fc.constantFrom('a', 'b', 'c'), maxLength: 4 })
const usage = fc.record({ inputTokens: fc.nat(1000), outputTokens: fc.nat(1000) })
const stepPlan: fc.Arbitrary<StepPlan> = fc.record({
  deltas: fc.array(word, { maxLength: 3 }),
  content: fc.option(word, { nil: null }),
  usage: fc.option(usage, { nil: null }),
})
const endReason: fc.Arbitrary<TurnEndReason> = fc.constantFrom<TurnEndReason>(
  { kind: 'completed' },
  { kind: 'max-tokens' },
  { kind: 'aborted', cause: { kind: 'parent' } },
  { kind: 'aborted', cause: { kind: 'user' } },
  { kind: 'blocked' },
  { kind: 'interrupted' },
  { kind: 'error', error: { message: 'boom', code: 'MAX_STEPS' } },
)
const finishedTurn: fc.Arbitrary<TurnPlan> = fc.record({ steps: fc.array(stepPlan, { maxLength: 3 }), end: endReason })
const openTurn: fc.Arbitrary<TurnPlan> = fc.record({ steps: fc.array(stepPlan, { maxLength: 3 }), end: fc.constant(null) })
const turnPlans: fc.Arbitrary<TurnPlan[]> = fc
  .tuple(fc.array(finishedTurn, { maxLength: 4 }), fc.option(openTurn, { nil: null }))
  .map(([finished, open]) => (open === null ? finished : [...finished, open]))

type Entry = [type: string, data: unknown]

function build(entries: readonly Entry[]): readonly SessionEvent[] {
  return Object.freeze(entries.map(([type, data], seq) => Object.freeze({ seq, type, data: Object.freeze(data) })))
}

function reseq(events: readonly SessionEvent[]): readonly SessionEvent[] {
  return build(events.map((event): Entry => [event.type, event.data]))
}

/** Writes the plans as the agent loop would, numbering turns from `firstTurn`, texts prefixed by `marker`. */
function entries(plans: readonly TurnPlan[], marker: string, firstTurn: number): Entry[] {
  const out: Entry[] = []
  plans.forEach((plan, index) => {
    const turn = firstTurn + index
    out.push(['turn/start', { turn, trigger: 'message' }])
    out.push(['user/message', { content: [{ type: 'text', text: `${marker}ask` }], source: { kind: 'user' } }])
    plan.steps.forEach((stepPlan, step) => {
      out.push(['step/start', { turn, step }])
      for (const text of stepPlan.deltas) out.push(['assistant/delta', { turn, step, text: `${marker}${text}` }])
      const content: ContentBlock[] = stepPlan.content === null ? [] : [{ type: 'text', text: `${marker}${stepPlan.content}` }]
      out.push(['assistant/message', stepPlan.usage === null ? { turn, step, content } : { turn, step, content, usage: stepPlan.usage }])
    })
    if (plan.end !== null) out.push(['turn/end', { turn, reason: plan.end }])
  })
  return out
}

function sumUsage(plans: readonly TurnPlan[]): Usage | undefined {
  let total: Usage | undefined
  for (const plan of plans) {
    for (const step of plan.steps) {
      if (step.usage === null) continue
      total ??= { inputTokens: 0, outputTokens: 0 }
      total.inputTokens += step.usage.inputTokens
      total.outputTokens += step.usage.outputTokens
    }
  }
  return total
}

/** A forked child's log: the parent's seed (texts marked `seed-`), then the child's own turns (`own-`). */
const forkedLog = fc.tuple(turnPlans, turnPlans).map(([parentPlans, ownPlans]) => {
  const seed = forkSeed(build(entries(parentPlans, 'seed-', 0)))
  const own = entries(ownPlans, 'own-', parentPlans.length)
  const events = build([...seed.map((event): Entry => [event.type, event.data]), ...own])
  return { events, seedLength: seed.length, own: build(own), ownPlans }
})

function utf8Length(value: string): number {
  return new TextEncoder().encode(value).length
}

describe('result properties', () => {
  describe('forkSeed', () => {
    it('returns a prefix of the parent log', () => {
      fc.assert(
        fc.property(turnPlans, (plans) => {
          const events = build(entries(plans, '', 0))
          const seed = forkSeed(events)
          expect(seed.length).to.be.at.most(events.length)
          for (let i = 0; i < seed.length; i++) expect(seed[i]).to.equal(events[i])
        }),
        { numRuns },
      )
    })

    it('ends with the last turn/end or is empty', () => {
      fc.assert(
        fc.property(turnPlans, (plans) => {
          const events = build(entries(plans, '', 0))
          const seed = forkSeed(events)
          if (seed.length > 0) expect(seed[seed.length - 1].type).to.equal('turn/end')
          for (let i = seed.length; i < events.length; i++) expect(events[i].type).not.to.equal('turn/end')
        }),
        { numRuns },
      )
    })

    it('holds balanced turn/start and turn/end pairs', () => {
      fc.assert(
        fc.property(turnPlans, (plans) => {
          let open = 0
          for (const event of forkSeed(build(entries(plans, '', 0)))) {
            if (event.type === 'turn/start') open++
            if (event.type === 'turn/end') open--
            expect(open).to.be.within(0, 1)
          }
          expect(open).to.equal(0)
        }),
        { numRuns },
      )
    })
  })

  describe('readResult', () => {
    it('never returns text that appears only in the seed', () => {
      fc.assert(
        fc.property(forkedLog, fc.boolean(), ({ events, seedLength }, cancelled) => {
          for (const block of readInEnglish(events, seedLength, cancelled).output) {
            expect(block.type === 'text' && block.text.includes('seed-')).to.equal(false)
          }
        }),
        { numRuns },
      )
    })

    it('reads a forked log exactly as the child own events alone', () => {
      fc.assert(
        fc.property(forkedLog, fc.boolean(), ({ events, seedLength, own }, cancelled) => {
          expect(readInEnglish(events, seedLength, cancelled)).to.deep.equal(readInEnglish(reseq(own), 0, cancelled))
        }),
        { numRuns },
      )
    })

    it('sums usage over own messages only', () => {
      fc.assert(
        fc.property(forkedLog, ({ events, seedLength, ownPlans }) => {
          expect(readInEnglish(events, seedLength, false).usage).to.deep.equal(sumUsage(ownPlans))
        }),
        { numRuns },
      )
    })

    it('reports a cancelled run as completed or aborted', () => {
      fc.assert(
        fc.property(forkedLog, ({ events, seedLength }) => {
          expect(readInEnglish(events, seedLength, true).stopReason).to.be.oneOf(['completed', 'aborted'])
        }),
        { numRuns },
      )
    })

    it('gives every non-completed result a diagnostic and a completed one none', () => {
      fc.assert(
        fc.property(forkedLog, fc.boolean(), ({ events, seedLength }, cancelled) => {
          const result = readInEnglish(events, seedLength, cancelled)
          expect('diagnostic' in result).to.equal(result.stopReason !== 'completed')
        }),
        { numRuns },
      )
    })

    it('bounds any error diagnostic to 4096 well-formed UTF-8 bytes', () => {
      fc.assert(
        fc.property(fc.string({ unit: 'binary', maxLength: 3000 }), (message) => {
          const events = build([
            ['turn/start', { turn: 0, trigger: 'message' }],
            ['turn/end', { turn: 0, reason: { kind: 'error', error: { message } } }],
          ])
          const diagnostic = readInEnglish(events, 0, false).diagnostic!
          const full = message === '' ? 'the child turn failed' : `the child turn failed: ${message}`
          expect(utf8Length(diagnostic)).to.be.at.most(4096)
          if (utf8Length(full) <= 4096) expect(diagnostic).to.equal(full)
          else {
            expect(diagnostic.endsWith('…')).to.equal(true)
            expect(full.startsWith(diagnostic.slice(0, -1))).to.equal(true)
            expect(new TextDecoder().decode(new TextEncoder().encode(diagnostic))).to.equal(diagnostic)
          }
        }),
        { numRuns },
      )
    })
  })

  describe('parentDepth', () => {
    it('is the larger of the header and runtime depths', () => {
      fc.assert(
        fc.property(fc.option(fc.maxSafeNat(), { nil: undefined }), fc.option(fc.maxSafeNat(), { nil: undefined }), (header, runtime) => {
          expect(parentDepth(header, runtime)).to.equal(Math.max(header ?? 0, runtime ?? 0))
        }),
        { numRuns },
      )
    })
  })
})
