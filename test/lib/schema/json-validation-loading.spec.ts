import { expect } from 'chai'
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../../../', import.meta.url))

/**
 * Runs `body` in a fresh Node process (this one has ajv loaded already) after importing
 * `lib/schema/json-validation.ts`, and returns what it printed; `ajvLoaded()` tells whether
 * ajv's code is in the module cache.
 */
function inFreshProcess(body: string): string {
  const script = `
    import { createRequire } from 'node:module'
    import { jsonViolations } from './lib/schema/json-validation.ts'
    import { schemaViolations } from './lib/schema/schema-subset.ts'
    const cache = createRequire(process.cwd() + '/').cache
    const ajvLoaded = () => Object.keys(cache).some((file) => file.includes('/node_modules/ajv/'))
    ${body}`
  return execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' })
}

describe('json-validation loads ajv on demand', () => {
  it('validates schemas inside the SPEC §3 subset without loading ajv', function () {
    this.timeout(30000)
    const printed = inFreshProcess(`
      const schema = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }
      const before = ajvLoaded()
      const violations = jsonViolations(schema, { a: 1 })
      console.log(JSON.stringify({ before, inSubset: schemaViolations(schema).length === 0, violations, after: ajvLoaded() }))`)
    expect(JSON.parse(printed)).to.deep.equal({
      before: false,
      inSubset: true,
      violations: ['value.a must be string'],
      after: false,
    })
  })

  it('loads ajv for the first schema outside the subset and validates with it', function () {
    this.timeout(30000)
    const printed = inFreshProcess(`
      const schema = { not: { type: 'string' } }
      const violations = jsonViolations(schema, 'text')
      console.log(JSON.stringify({ inSubset: schemaViolations(schema).length === 0, violations, after: ajvLoaded() }))`)
    expect(JSON.parse(printed)).to.deep.equal({ inSubset: false, violations: ['value must NOT be valid'], after: true })
  })
})
