/**
 * The `subagent-inprocess` command, run as a child process (tsx, as `npm start` runs it).
 */
import { expect } from 'chai'
import { runCli } from '../support/cli.ts'
import { probeSource, type Workspace, workspace } from './fixture.ts'

describe('subagent-inprocess start', function () {
  // each case starts a Node process with tsx
  this.timeout(60_000)
  let space: Workspace

  beforeEach(() => {
    space = workspace()
  })

  afterEach(() => space.cleanup())

  it('prints a rejected entry config to stderr, loads the rest and exits with the code a plugin asks for', async () => {
    space.write('probe.ts', probeSource('v1'))
    space.write('quit.ts', probeSource('v1', { emitExit: 3 }))
    space.write('cordis.yml', 'plugins:\n  bad: { path: ./probe.ts, config: { count: -1 } }\n  quit: { path: ./quit.ts }\n')
    const outcome = await runCli(['start', space.configFile])
    expect(outcome.code).to.equal(3)
    expect(outcome.stderr).to.equal('error [loader] plugin "bad": count: expected number >= 0 but got -1\n')
  })

  it('serves the inspector on 127.0.0.1 with --inspect and says where', async () => {
    space.write('quit.ts', probeSource('v1', { emitExit: 3 }))
    space.write('cordis.yml', 'plugins:\n  quit: { path: ./quit.ts }\n')
    const outcome = await runCli(['start', space.configFile, '--inspect'])
    expect(outcome.code).to.equal(3)
    expect(outcome.stderr).to.match(/^inspector: http:\/\/127\.0\.0\.1:\d+\/\n$/)
  })

  it('exits with 1 when the config file cannot be read', async () => {
    const outcome = await runCli(['start', space.configFile])
    expect(outcome.code).to.equal(1)
    expect(outcome.stderr).to.match(/^error \[loader\] cannot read host config ".*cordis\.yml": ENOENT/)
  })

  it('prints the usage and exits with 2 for an unknown command', async () => {
    const outcome = await runCli(['serve'])
    expect(outcome.code).to.equal(2)
    expect(outcome.stderr).to.match(/^unknown command "serve"\n\nusage: subagent-inprocess start \[config\] \[--watch\]/)
  })

  it('prints its help in the locale chosen with --locale', async () => {
    const outcome = await runCli(['--locale', 'zh-CN', '--help'])
    expect(outcome.code).to.equal(0)
    expect(outcome.stdout).to.match(/^用法：subagent-inprocess start/)
  })

  it('rejects a locale it does not ship with exit code 2', async () => {
    const outcome = await runCli(['start', '--locale', 'fr-FR'])
    expect(outcome.code).to.equal(2)
    expect(outcome.stderr).to.match(/^unknown locale "fr-FR" \(en-US or zh-CN\)/)
  })
})
