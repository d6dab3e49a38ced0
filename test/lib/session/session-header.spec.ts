import { expect } from 'chai'
import { SubagentError } from '../../../lib/errors.ts'
import { buildHeader } from '../../../lib/session/session-header.ts'

const base = { id: 's1', createdAt: 1 }

function failure(fields: Record<string, unknown>): SubagentError {
  try {
    buildHeader(fields)
  } catch (error) {
    if (SubagentError.is(error)) return error
    throw error
  }
  throw new Error('expected buildHeader to throw')
}

describe('buildHeader (the session header rule, SPEC §1.2)', () => {
  it('freezes a header with only the documented fields', () => {
    const header = buildHeader({ ...base, cwd: '/w', origin: 'subagent', delegationDepth: 2, seedLength: 0, extra: 'x' })
    expect(header).to.deep.equal({ ...base, cwd: '/w', origin: 'subagent', delegationDepth: 2, seedLength: 0 })
    expect(Object.isFrozen(header)).to.equal(true)
  })

  for (const field of ['delegationDepth', 'seedLength']) {
    for (const bad of [-1, 1.5, Number.NaN, '2']) {
      it(`rejects a ${field} of ${typeof bad === 'string' ? `"${bad}"` : String(bad)} naming the field`, () => {
        const error = failure({ ...base, [field]: bad })
        expect(error.code).to.equal('INVALID_SESSION')
        expect(error.message).to.equal(`session header ${field} must be a non-negative safe integer`)
      })
    }
  }

  it('rejects an origin other than "subagent"', () => {
    expect(failure({ ...base, origin: 'user' }).message).to.equal('session header origin must be "subagent"')
  })

  it('rejects an empty id', () => {
    expect(failure({ ...base, id: '' }).message).to.equal('session header id must be a non-empty string')
  })

  for (const field of ['cwd', 'parentSession', 'label', 'callId']) {
    it(`rejects a non-string ${field} naming the field`, () => {
      const error = failure({ ...base, [field]: 5 })
      expect(error.code).to.equal('INVALID_SESSION')
      expect(error.message).to.equal(`session header ${field} must be a string`)
    })
  }

  it('reports the first bad field in the order of the header keys when several are bad', () => {
    const error = failure({ ...base, seedLength: -1, origin: 'user', callId: 1, label: 2 })
    expect(error.message).to.equal('session header label must be a string')
  })

  it('keeps the header keys in the documented order whatever order the fields come in', () => {
    const header = buildHeader({ seedLength: 1, delegationDepth: 2, origin: 'subagent', callId: 'c', label: 'l', parentSession: 'p', cwd: '/w', ...base })
    expect(Object.keys(header)).to.deep.equal(['id', 'createdAt', 'cwd', 'parentSession', 'label', 'callId', 'origin', 'delegationDepth', 'seedLength'])
  })

  it('reads each field once, so a getter cannot pass the check with one value and store another', () => {
    let reads = 0
    const fields = {
      ...base,
      get label(): unknown {
        reads++
        return reads === 1 ? 'checked' : 42
      },
    }
    expect(buildHeader(fields).label).to.equal('checked')
    expect(reads).to.equal(1)
  })

  it('keeps an approval policy as a frozen copy, its rules frozen too', () => {
    const approval = { default: 'ask', rules: [{ tool: 'shell', decision: 'deny' }] }
    const header = buildHeader({ ...base, approval })
    expect(header.approval).to.deep.equal(approval)
    expect(header.approval).not.to.equal(approval)
    expect(Object.isFrozen(header.approval)).to.equal(true)
    expect(Object.isFrozen(header.approval!.rules![0])).to.equal(true)
  })

  it('rejects a malformed approval policy naming every problem', () => {
    const error = failure({ ...base, approval: { default: 'alow', rules: 'x' } })
    expect(error.code).to.equal('INVALID_SESSION')
    expect(error.message).to.equal(
      'session header approval default must be "allow", "ask" or "deny" (did you mean "allow"?); session header approval rules must be an array of {tool, decision}',
    )
  })

  it('keeps an agent definition name', () => {
    expect(buildHeader({ ...base, agent: 'code-reviewer' }).agent).to.equal('code-reviewer')
  })

  for (const bad of ['Reviewer', '', '1x', 5, 'a'.repeat(65)]) {
    it(`rejects an agent of ${JSON.stringify(bad).slice(0, 20)} as not a definition name`, () => {
      const error = failure({ ...base, agent: bad })
      expect(error.code).to.equal('INVALID_SESSION')
      expect(error.message).to.equal('session header agent must be a definition name matching /^[a-z][a-z0-9-]{0,63}$/')
    })
  }

  it('puts agent and approval after the depth fields', () => {
    const header = buildHeader({ approval: {}, agent: 'a', seedLength: 0, ...base })
    expect(Object.keys(header)).to.deep.equal(['id', 'createdAt', 'seedLength', 'agent', 'approval'])
  })

  it('keeps agentOptions, a JSON object, as given', () => {
    const header = buildHeader({ ...base, agentOptions: { provider: 'p', model: 'm', maxTokens: 5 } })
    expect(header.agentOptions).to.deep.equal({ provider: 'p', model: 'm', maxTokens: 5 })
  })

  for (const bad of [null, 'p', ['p'], { when: new Date(0) }, { n: Number.NaN }]) {
    it(`rejects agentOptions of ${JSON.stringify(bad) ?? String(bad)} that is not a JSON object`, () => {
      const error = failure({ ...base, agentOptions: bad })
      expect(error.code).to.equal('INVALID_SESSION')
      expect(error.message).to.equal('session header agentOptions must be a JSON object')
    })
  }
})
