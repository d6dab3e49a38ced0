/**
 * The `subagent-inprocess` command, run as a child process (tsx, as `npm start` runs it).
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { expect } from 'chai'
import { probeSource, type Workspace, workspace } from './fixture.ts'

const projectRoot = fileURLToPath(new URL('../../', import.meta.url))

interface Outcome {
  code: number | null
  stdout: string
  stderr: string
}

function runCli(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/subagent-inprocess.ts', ...args], {
      cwd: projectRoot,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

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
})
