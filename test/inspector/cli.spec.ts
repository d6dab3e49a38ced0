import { spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { expect } from 'chai'
import { skippedMessage } from '../../plugins/inspector/index.ts'
import { projectRoot, runCli } from '../support/cli.ts'
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

describe('subagent-inprocess inspect: text from the files on the terminal', function () {
  this.timeout(60_000)
  let dir: string

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'inspect-cli-'))
  })

  afterEach(() => rm(dir, { recursive: true, force: true }))

  it('shows escape and bell sequences of a header id and a file name as visible stand-ins', async () => {
    await writeFile(join(dir, 'a.jsonl'), `${JSON.stringify({ version: 1, header: { id: '\u001b]0;owned\u0007', createdAt: 1 } })}\n`)
    await writeFile(join(dir, 'b\u001b[2J.jsonl'), 'garbage\n')
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/subagent-inprocess.ts', 'inspect', dir], {
      cwd: projectRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (chunk) => (stderr += chunk))
    // 'close', not 'exit': stderr is read whole only once its pipe closed
    const exited = new Promise((resolve) => child.on('close', resolve))
    await new Promise<void>((resolve) => {
      let stdout = ''
      child.stdout.on('data', (chunk) => {
        stdout += chunk
        if (stdout.includes('inspector: ')) resolve()
      })
    })
    child.kill('SIGTERM')
    expect(await exited).to.equal(0)
    expect(stderr.includes('\u001b') || stderr.includes('\u0007')).to.equal(false)
    expect(stderr).to.include('␛]0;owned␇')
    expect(stderr).to.include('b␛[2J.jsonl')
  })
})

describe('subagent-inprocess: a folder or port the inspector cannot use', function () {
  // each case starts a Node process with tsx
  this.timeout(60_000)
  let blocker: Server
  let takenPort: number

  beforeEach(async () => {
    blocker = createServer()
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
    takenPort = (blocker.address() as AddressInfo).port
  })

  afterEach(() => new Promise<void>((resolve) => blocker.close(() => resolve())))

  it('says in one line that the sessions folder cannot be read, and exits with 1', async () => {
    const missing = join(tmpdir(), 'inspect-cli-missing-folder')
    const outcome = await runCli(['inspect', missing])
    expect([outcome.code, outcome.stderr]).to.deep.equal([
      1,
      `cannot read the sessions folder "${missing}": ENOENT: no such file or directory, scandir '${missing}'\n`,
    ])
  })

  it('says in one line that inspect cannot listen on a taken port, and exits with 1', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'inspect-cli-'))
    try {
      const outcome = await runCli(['inspect', dir, String(takenPort)])
      expect([outcome.code, outcome.stderr]).to.deep.equal([
        1,
        `cannot serve the inspector: listen EADDRINUSE: address already in use 127.0.0.1:${takenPort}\n`,
      ])
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('says in one line that start --inspect cannot listen on a taken port, and exits with 1', async () => {
    const outcome = await runCli(['start', 'cordis.yml', '--inspect', String(takenPort)])
    expect([outcome.code, outcome.stderr, outcome.stdout]).to.deep.equal([
      1,
      `cannot serve the inspector: listen EADDRINUSE: address already in use 127.0.0.1:${takenPort}\n`,
      '',
    ])
  })
})
