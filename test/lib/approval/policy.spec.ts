import { expect } from 'chai'
import fc from 'fast-check'
import {
  type ApprovalDecisionWord,
  type ApprovalPolicy,
  allowsEverything,
  approvalPolicyProblems,
  decideByPolicy,
  matchesTool,
  mergeStrictest,
  readApprovalPolicy,
  stricter,
} from '../../../lib/approval/policy.ts'

function thrown(fn: () => unknown): Error {
  try {
    fn()
  } catch (error) {
    return error as Error
  }
  throw new Error('expected a throw')
}

describe('approval policy check (SPEC §11.1)', () => {
  it('reads a well-formed policy into a frozen copy with only the given fields', () => {
    const source = { default: 'ask', rules: [{ tool: 'mcp__*', decision: 'deny' }] }
    const policy = readApprovalPolicy(source, 'policy')
    expect(policy).to.deep.equal(source)
    expect(policy).not.to.equal(source)
    expect(Object.isFrozen(policy)).to.equal(true)
    expect(Object.isFrozen(policy.rules)).to.equal(true)
    expect(Object.isFrozen(policy.rules![0])).to.equal(true)
  })

  it('accepts the empty policy, which allows everything', () => {
    expect(readApprovalPolicy({}, 'policy')).to.deep.equal({})
    expect(allowsEverything({})).to.equal(true)
  })

  it('rejects a value that is not an object', () => {
    for (const bad of [null, 'ask', [], 3]) {
      expect(approvalPolicyProblems(bad, 'subagent request approval')).to.deep.equal([
        'subagent request approval must be an object with default, readOnly and/or rules',
      ])
    }
  })

  it('names an unknown key with a did-you-mean for a near miss', () => {
    expect(approvalPolicyProblems({ defualt: 'ask' }, 'policy')).to.deep.equal(['policy has unknown key "defualt" (did you mean "default"?)'])
    expect(approvalPolicyProblems({ colour: 'red' }, 'policy')).to.deep.equal(['policy has unknown key "colour"'])
  })

  it('names a wrong decision word with a did-you-mean for a near miss', () => {
    expect(approvalPolicyProblems({ default: 'alow' }, 'policy')).to.deep.equal([
      'policy default must be "allow", "ask" or "deny" (did you mean "allow"?)',
    ])
    expect(approvalPolicyProblems({ readOnly: 'maybe' }, 'policy')).to.deep.equal([
      'policy readOnly must be "allow", "ask" or "deny", not "maybe"',
    ])
    expect(approvalPolicyProblems({ default: 1 }, 'policy')).to.deep.equal(['policy default must be "allow", "ask" or "deny"'])
  })

  it('checks every rule: its keys, its tool pattern and its decision', () => {
    const problems = approvalPolicyProblems(
      { rules: [{ tool: 'shell', decision: 'deny' }, 'x', { tool: 'a*b', decision: 'ask' }, { tool: 'x', decison: 'ask' }] },
      'policy',
    )
    expect(problems).to.deep.equal([
      'policy rules[1] must be an object with tool and decision',
      'policy rules[2] tool must be a tool name or a prefix ending in "*"',
      'policy rules[3] has unknown key "decison" (did you mean "decision"?)',
      'policy rules[3] decision must be "allow", "ask" or "deny"',
    ])
  })

  it('rejects rules that are not an array', () => {
    expect(approvalPolicyProblems({ rules: { tool: 'x' } }, 'policy')).to.deep.equal(['policy rules must be an array of {tool, decision}'])
  })

  it('throws one TypeError listing every problem', () => {
    const error = thrown(() => readApprovalPolicy({ default: 'no', extra: 1 }, 'policy'))
    expect(error).to.be.instanceOf(TypeError)
    expect(error.message).to.equal('policy has unknown key "extra"; policy default must be "allow", "ask" or "deny", not "no"')
  })
})

describe('approval policy decision (SPEC §11.1)', () => {
  it('matches exact names and prefixes ending in *', () => {
    expect(matchesTool('shell', 'shell')).to.equal(true)
    expect(matchesTool('shell', 'shell2')).to.equal(false)
    expect(matchesTool('mcp__*', 'mcp__github__search')).to.equal(true)
    expect(matchesTool('mcp__*', 'mcp_x')).to.equal(false)
    expect(matchesTool('*', 'anything')).to.equal(true)
  })

  it('lets the first matching rule win over readOnly and default', () => {
    const policy: ApprovalPolicy = { default: 'deny', readOnly: 'deny', rules: [{ tool: 'read', decision: 'allow' }, { tool: 'r*', decision: 'ask' }] }
    expect(decideByPolicy(policy, 'read', true)).to.equal('allow')
    expect(decideByPolicy(policy, 'rm', false)).to.equal('ask')
    expect(decideByPolicy(policy, 'ls', true)).to.equal('deny')
  })

  it('uses readOnly for a read-only tool and default for any other, each allow when absent', () => {
    expect(decideByPolicy({ default: 'ask' }, 'ls', true)).to.equal('allow')
    expect(decideByPolicy({ default: 'ask' }, 'rm', false)).to.equal('ask')
    expect(decideByPolicy({ readOnly: 'deny' }, 'ls', true)).to.equal('deny')
    expect(decideByPolicy(undefined, 'rm', false)).to.equal('allow')
  })

  it('orders decisions deny > ask > allow', () => {
    expect(stricter('allow', 'ask')).to.equal('ask')
    expect(stricter('deny', 'ask')).to.equal('deny')
    expect(stricter('allow', 'allow')).to.equal('allow')
  })
})

const words: ApprovalDecisionWord[] = ['allow', 'ask', 'deny']
const names = ['a', 'ab', 'abc', 'b', 'ba', 'mcp__x', 'mcp__y', 'zz']
const patterns = [...names, 'a*', 'ab*', 'b*', 'mcp__*', '*']
const decisionArb = fc.constantFrom(...words)
const policyArb: fc.Arbitrary<ApprovalPolicy> = fc.record(
  {
    default: decisionArb,
    readOnly: decisionArb,
    rules: fc.array(fc.record({ tool: fc.constantFrom(...patterns), decision: decisionArb }), { maxLength: 5 }),
  },
  { requiredKeys: [] },
)

describe('strictest merge of approval policies (SPEC §11.1 narrowing)', () => {
  it('is never weaker than either policy, for any tool, read-only or not', () => {
    fc.assert(
      fc.property(policyArb, policyArb, fc.constantFrom(...names), fc.boolean(), (a, b, name, readOnly) => {
        const merged = decideByPolicy(mergeStrictest(a, b), name, readOnly)
        const expected = stricter(decideByPolicy(a, name, readOnly), decideByPolicy(b, name, readOnly))
        return stricter(merged, expected) === merged
      }),
    )
  })

  it('is exact whenever neither policy splits on readOnly', () => {
    fc.assert(
      fc.property(policyArb, policyArb, fc.constantFrom(...names), fc.boolean(), (a, b, name, readOnly) => {
        const flat = (p: ApprovalPolicy): ApprovalPolicy => ({ ...p, readOnly: p.default ?? 'allow' })
        const merged = decideByPolicy(mergeStrictest(flat(a), flat(b)), name, readOnly)
        return merged === stricter(decideByPolicy(flat(a), name, readOnly), decideByPolicy(flat(b), name, readOnly))
      }),
    )
  })

  it('gives the other policy back when one allows everything', () => {
    const policy: ApprovalPolicy = { default: 'ask', rules: [{ tool: 'ls', decision: 'allow' }] }
    expect(mergeStrictest(undefined, policy)).to.deep.equal(policy)
    expect(mergeStrictest(policy, {})).to.deep.equal(policy)
    expect(mergeStrictest({}, { default: 'allow' })).to.deep.equal({})
  })

  it('keeps a parent deny rule that a child allow rule names more specifically', () => {
    const merged = mergeStrictest({ rules: [{ tool: 'mcp__*', decision: 'deny' }] }, { default: 'ask', rules: [{ tool: 'mcp__x', decision: 'allow' }] })
    expect(decideByPolicy(merged, 'mcp__x', false)).to.equal('deny')
    expect(decideByPolicy(merged, 'other', false)).to.equal('ask')
  })

  it('returns a frozen policy of the §11.1 shape', () => {
    const merged = mergeStrictest({ default: 'ask' }, { rules: [{ tool: 'x', decision: 'deny' }] })
    expect(Object.isFrozen(merged)).to.equal(true)
    expect(approvalPolicyProblems(merged, 'merged')).to.deep.equal([])
  })
})
