import { expect } from 'chai'
import { closestName, editDistance } from '../../../lib/text/closest-name.ts'

describe('editDistance', () => {
  it('counts an adjacent swap as one edit', () => {
    expect(editDistance('stpes', 'steps')).to.equal(1)
  })

  it('counts insertions and deletions', () => {
    expect(editDistance('maxStep', 'maxSteps')).to.equal(1)
    expect(editDistance('', 'abc')).to.equal(3)
  })
})

describe('closestName', () => {
  it('suggests a name that differs only in case', () => {
    expect(closestName('maxdepth', ['maxSteps', 'maxDepth'])).to.equal('maxDepth')
  })

  it('suggests nothing when every name is too far from the typed one', () => {
    expect(closestName('colour', ['steps', 'label'])).to.equal(undefined)
  })

  it('prefers the nearest of several close names', () => {
    expect(closestName('maxToken', ['maxTokens', 'maxTokensX'])).to.equal('maxTokens')
  })
})
