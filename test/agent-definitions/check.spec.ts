import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { expect } from 'chai'
import { runCli } from '../support/cli.ts'
import { projectRoot } from '../support/cli.ts'
import { definitionText, tempFolder } from './fixture.ts'

/** A host config in a temp folder loading AgentDefinitions (plus `extra` YAML entries), with an `agents/` folder. */
function configFolder(files: Record<string, string>, entryConfig = '', extra = ''): { folder: string; config: string } {
  const folder = tempFolder('check-')
  mkdirSync(join(folder, 'agents'))
  for (const [name, text] of Object.entries(files)) writeFileSync(join(folder, 'agents', name), text)
  const plugins = join(projectRoot, 'plugins')
  const config = join(folder, 'host.yml')
  writeFileSync(
    config,
    [
      'plugins:',
      '  host:',
      `    path: ${join(plugins, 'host/index.ts')}`,
      '  inprocess-run:',
      `    path: ${join(plugins, 'inprocess-run/index.ts')}`,
      '  agent-definitions:',
      `    path: ${join(plugins, 'agent-definitions/index.ts')}`,
      ...(entryConfig ? [`    config: ${entryConfig}`] : []),
      extra,
    ].join('\n'),
  )
  return { folder, config }
}

describe('subagent-inprocess check <config>', () => {
  it('exits 0 with a one-line summary when the config and every definition are sound', async () => {
    const { folder, config } = configFolder({ 'a.md': definitionText({ name: 'a', description: 'A.' }) })
    try {
      const outcome = await runCli(['check', config])
      expect([outcome.code, outcome.stderr]).to.deep.equal([0, ''])
      expect(outcome.stdout).to.equal(`${config}: no problems (3 plugins, 1 agent definitions)\n`)
    } finally {
      rmSync(folder, { recursive: true, force: true })
    }
  })

  it('prints every problem, definitions and config keys alike, and exits 1', async () => {
    const { folder, config } = configFolder(
      { 'a.md': definitionText({ name: 'a', description: 'A.', maxStep: 3 }), 'b.md': 'no front matter\n' },
      '{ debounceMs: 10, dirz: [x] }',
      `  depth-policy:\n    path: ${join(projectRoot, 'plugins/depth-policy/index.ts')}\n    config: { maxdepth: 2 }`,
    )
    try {
      const outcome = await runCli(['check', config])
      expect(outcome.code).to.equal(1)
      expect(outcome.stdout).to.equal('')
      expect(outcome.stderr.split('\n')).to.deep.equal([
        'plugin "agent-definitions": unknown key "dirz" (did you mean "dirs"?)',
        'plugin "depth-policy": unknown key "maxdepth" (did you mean "maxDepth"?)',
        `${config}: 2 problems`,
        '',
      ])
    } finally {
      rmSync(folder, { recursive: true, force: true })
    }
  })

  it('names each broken definition file with its line and problem', async () => {
    const { folder, config } = configFolder({ 'a.md': definitionText({ name: 'a', description: 'A.', maxStep: 3 }), 'b.md': 'no front matter\n' })
    try {
      const outcome = await runCli(['check', config])
      expect(outcome.code).to.equal(1)
      expect(outcome.stderr.split('\n')).to.deep.equal([
        `${join(folder, 'agents/a.md')}:4: unknown field "maxStep" (did you mean "maxSteps"?)`,
        `${join(folder, 'agents/b.md')}:1: missing YAML front matter: the file must start with a "---" line`,
        `${config}: 2 problems`,
        '',
      ])
    } finally {
      rmSync(folder, { recursive: true, force: true })
    }
  })

  it('passes the shipped demo config', async () => {
    const outcome = await runCli(['check', 'cordis.yml'])
    expect([outcome.code, outcome.stderr]).to.deep.equal([0, ''])
    expect(outcome.stdout).to.match(/^cordis\.yml: no problems \(\d+ plugins, \d+ agent definitions\)\n$/)
  })

  it('refuses a missing or an extra argument with exit 2', async () => {
    const outcome = await runCli(['check'])
    expect(outcome.code).to.equal(2)
    expect(outcome.stderr).to.match(/^"check" takes one host config file\n/)
  })
})
