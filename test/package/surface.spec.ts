import { readFileSync } from 'node:fs'
import { expect } from 'chai'
import * as pkg from '../../index.ts'

const entry: Record<string, unknown> = { ...pkg }

describe('package surface (SPEC §7)', () => {
  const plugins = [
    'InProcessRun',
    'StructuredOutput',
    'DepthPolicy',
    'Host',
    'SessionFiles',
    'ScriptedModel',
    'OpenAIModel',
    'CodeMode',
    'SubagentTool',
    'TreeBudget',
    'Tracing',
    'Inspector',
  ] as const

  for (const name of plugins) {
    it(`re-exports the ${name} plugin from the root entry`, () => {
      expect(entry[name]).to.be.a('function')
    })
  }

  it('re-exports SubagentDepthError with its fields', () => {
    const error = new pkg.SubagentDepthError(3, 2)
    expect(error).to.include({ name: 'SubagentDepthError', attemptedDepth: 3, maxDepth: 2 })
    expect(pkg.SubagentError.is(error)).to.equal(true)
  })

  it('re-exports SubagentBudgetError with its fields', () => {
    const error = new pkg.SubagentBudgetError('tokens', 120, 100)
    expect(error).to.include({ name: 'SubagentBudgetError', limit: 'tokens', used: 120, max: 100, code: 'BUDGET_EXHAUSTED' })
    expect(error.message).to.equal('subagent budget exhausted: tokens 120 of 100')
    expect(pkg.SubagentError.is(error)).to.equal(true)
  })

  it('is published as subagent-inprocess with dist/ as its entry', () => {
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))
    expect(manifest.name).to.equal('subagent-inprocess')
    expect(manifest.exports['.']).to.deep.equal({ types: './dist/index.d.ts', import: './dist/index.js' })
    expect(manifest.dependencies.cordis).to.equal('4.0.0-rc.10')
  })

  for (const file of ['depth-policy', 'inprocess-run', 'structured-output', 'subagent-tool', 'code-mode', 'session-files', 'tree-budget', 'tracing', 'inspector']) {
    it(`default-exports a plugin from plugins/${file}`, async () => {
      const module = await import(`../../plugins/${file}/index.ts`)
      expect(module.default).to.be.a('function')
    })
  }
})
