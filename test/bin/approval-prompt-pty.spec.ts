/**
 * The approval prompt in a real pseudo-terminal: `npm start`'s command under util-linux `script`,
 * which gives the CLI a TTY for stdin and stdout, and a person typing `y` at the prompt.
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { expect } from 'chai'
import { projectRoot } from '../support/cli.ts'
import '../support/unhandled.ts'

const SCRIPT = '/usr/bin/script'

describe('the demo on a terminal (a pseudo-terminal from script(1))', function () {
  // one Node process with tsx, loading every plugin of the demo
  this.timeout(90_000)

  before(function () {
    if (!existsSync(SCRIPT)) {
      console.log(`    skipped: ${SCRIPT} is missing (apt-get install -y bsdutils); .ci/run installs it`)
      this.skip()
    }
  })

  it('shows the child\'s request at the prompt, waits for the keyboard, and runs the call on "y"', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, TERM: 'dumb' }
    delete env.DEEPSEEK_API_KEY
    delete env.OPENAI_API_KEY
    const command = `${JSON.stringify(process.execPath)} --import tsx bin/subagent-inprocess.ts start cordis.yml`
    // -q: no start and end lines; -e: script's exit code is the command's; /dev/null: no typescript file
    const child = spawn(SCRIPT, ['-q', '-e', '-c', command, '/dev/null'], { cwd: projectRoot, env, stdio: ['pipe', 'pipe', 'pipe'] })
    let screen = ''
    let typedAt = -1
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve))
    await new Promise<void>((resolve, reject) => {
      child.on('error', reject)
      child.stdout.setEncoding('utf8')
      child.stdout.on('data', (chunk: string) => {
        screen += chunk
        if (typedAt < 0 && screen.includes('approve? [y/n/a] ')) {
          typedAt = screen.length
          resolve()
        }
      })
      void exited.then(() => reject(new Error(`the demo ended before its prompt:\n${screen}`)))
    })
    // held a moment: nothing answers for the person on a terminal
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(screen.slice(typedAt)).to.equal('')
    // a terminal sends carriage return for Enter; the line discipline makes it a line feed
    child.stdin.write('y\r')
    expect(await exited).to.equal(0)
    const lines = screen.replace(/\r\n/g, '\n')
    expect(lines).to.match(/\napproval needed: child "release" · depth 1 · path root [0-9a-f]{8} › release [0-9a-f]{8}\n/)
    expect(lines).to.include('  tool       publish\n  arguments  {\n               "package": "tinyqueue",')
    expect(lines).to.include('\napproved: child "release" runs publish (user)\n')
    expect(lines).to.not.include('no keyboard')
    expect(lines).to.match(/\ndone: (\d+) of \1 subagents completed/)
  })
})
