import { expect } from 'chai'
import Schema from 'schemastery'
import { unknownConfigKeys } from '../../lib/config-keys.ts'

describe('unknownConfigKeys', () => {
  const schema = Schema.object({ maxSteps: Schema.natural(), limits: Schema.object({ steps: Schema.number() }) })

  it('finds nothing in a config that uses only declared keys', () => {
    expect(unknownConfigKeys(schema, { maxSteps: 1, limits: { steps: 2 } })).to.deep.equal([])
  })

  it('reports each unknown key with the closest declared one and the declared keys', () => {
    expect(unknownConfigKeys(schema, { maxsteps: 1, limits: { stpes: 2 } })).to.deep.equal([
      { path: 'maxsteps', suggestion: 'maxSteps', known: ['maxSteps', 'limits'] },
      { path: 'limits.stpes', suggestion: 'limits.steps', known: ['steps'] },
    ])
  })

  it('does not check a level whose keys a union leaves open', () => {
    const open = Schema.union([Schema.object({ a: Schema.number() }), Schema.object({ b: Schema.number() })])
    expect(unknownConfigKeys(open, { c: 1 })).to.deep.equal([])
  })

  it('leaves a value that is not a mapping to the schema', () => {
    expect(unknownConfigKeys(schema, 'text')).to.deep.equal([])
  })
})
