import { spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'chai'
import { skippedMessage } from '../../plugins/inspector/index.ts'
import { projectRoot } from '../support/cli.ts'
import { openStream } from './client.ts'

describe('subagent-inprocess inspect <sessions-dir>', () => {
  let dir: string

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'inspect-cli-'))
  })

  afterEach(() => rm(dir, { recursive: true, force: true }))

  it('serves the saved sessions on 127.0.0.1 and reports a foreign file on stderr', async () => {
    await writeFile(join(dir, 'root.jsonl'), `${JSON.stringify({ version: 1, header: { id: 'root', createdAt: 1 } })}\n`)
    await writeFile(join(dir, 'junk.jsonl'), 'garbage\n')
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/subagent-inprocess.ts', 'inspect', dir], {
      cwd: projectRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (chunk) => (stderr += chunk))
    const exited = new Promise((resolve) => child.on('exit', resolve))
    const url = await new Promise<string>((resolve) => {
      let stdout = ''
      child.stdout.on('data', (chunk) => {
        stdout += chunk
        const match = /inspector: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(stdout)
        if (match) resolve(match[1]!)
      })
    })
    const client = await openStream(url)
    const snapshot = (await client.next('snapshot')).data as { agents: { id: string }[]; problems: string[] }
    client.disconnect()
    child.kill('SIGTERM')
    expect(await exited).to.equal(0)
    expect(snapshot.agents.map((agent) => agent.id)).to.deep.equal(['root'])
    const problem = skippedMessage('junk.jsonl', 'session file "junk" line 1 is not a session header')
    expect(snapshot.problems).to.deep.equal([problem])
    expect(stderr).to.equal(`${problem}\n`)
  })
})
