import { readdirSync, readFileSync } from 'node:fs'
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
    'SessionPostgres',
    'ScriptedModel',
    'OpenAIModel',
    'CodeMode',
    'SubagentTool',
    'TreeBudget',
    'Tracing',
    'Inspector',
    'Approvals',
  ] as const

  for (const name of plugins) {
    it(`re-exports the ${name} plugin from the root entry`, () => {
      expect(entry[name]).to.be.a('function')
    })
  }

  it('re-exports the command-line approval prompt and its non-interactive default timeout', () => {
    expect([typeof pkg.attachApprovalPrompt, pkg.NON_INTERACTIVE_TIMEOUT_MS]).to.deep.equal(['function', 120_000])
  })

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
    expect(manifest.exports['.']).to.deep.equal({ types: './dist/index.d.ts', import: './dist/index.js', require: './esm-only.cjs' })
  })

  it('takes cordis as a peer pinned to the supported release, and openai, QuickJS, pg and the MCP SDK as optional peers', () => {
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))
    expect(manifest.peerDependencies).to.deep.equal({
      cordis: pkg.SUPPORTED_CORDIS,
      openai: '^6.30.1',
      'quickjs-emscripten': '^0.32.0',
      '@jitl/quickjs-wasmfile-release-sync': '0.32.0',
      pg: '^8.23.1',
      '@modelcontextprotocol/sdk': '^1.32.2',
    })
    expect(manifest.peerDependenciesMeta).to.deep.equal({
      openai: { optional: true },
      'quickjs-emscripten': { optional: true },
      '@jitl/quickjs-wasmfile-release-sync': { optional: true },
      pg: { optional: true },
      '@modelcontextprotocol/sdk': { optional: true },
    })
    for (const name of Object.keys(manifest.peerDependencies)) expect(manifest.dependencies?.[name]).to.equal(undefined)
  })

  it('declares one subpath export per plugin, each with types and an ESM entry', () => {
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))
    const plugins = readdirSync(new URL('../../plugins/', import.meta.url)).sort()
    for (const name of plugins) {
      expect(manifest.exports[`./${name}`], name).to.deep.equal({
        types: `./dist/plugins/${name}/index.d.ts`,
        import: `./dist/plugins/${name}/index.js`,
        require: './esm-only.cjs',
      })
    }
  })

  for (const file of ['depth-policy', 'inprocess-run', 'structured-output', 'subagent-tool', 'code-mode', 'session-files', 'session-postgres', 'tree-budget', 'tracing', 'inspector', 'approvals']) {
    it(`default-exports a plugin from plugins/${file}`, async () => {
      const module = await import(`../../plugins/${file}/index.ts`)
      expect(module.default).to.be.a('function')
    })
  }
})
