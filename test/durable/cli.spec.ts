import { spawn } from 'node:child_process'
import { access, mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'chai'
import { type CliOutcome, projectRoot } from '../support/cli.ts'
import { crashCopy, durableHost, removeAfterTest, tick } from './fixture.ts'

/** Runs `subagent-inprocess <args>` with `input` on stdin. */
function runWithInput(args: string[], input: string): Promise<CliOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/subagent-inprocess.ts', ...args], { cwd: projectRoot, stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
    child.stdin.end(input)
  })
}

async function hostConfig(): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), 'resume-config-'))
  removeAfterTest(folder)
  const file = join(folder, 'host.yml')
  const plugin = (path: string) => JSON.stringify(join(projectRoot, path))
  await writeFile(
    file,
    [
      'plugins:',
      `  host: { path: ${plugin('plugins/host/index.ts')} }`,
      `  scripted: { path: ${plugin('plugins/scripted-model/index.ts')} }`,
      `  inprocess-run: { path: ${plugin('plugins/inprocess-run/index.ts')} }`,
      `  answers: { path: ${plugin('test/durable/fixtures/script-answers.ts')} }`,
      '',
    ].join('\n'),
  )
  return file
}

describe('subagent-inprocess resume (SPEC §14)', function () {
  this.timeout(60_000)

  it('resumes a stored tree, sends each input line to its root, streams the answer and leaves the tree resumable', async () => {
    const first = await durableHost()
    const root = await first.agent()
    first.scripted.push('hang', 'hang')
    const child = await first.root.inprocessRun.spawn({ parent: root, prompt: 'task', label: 'worker', signal: new AbortController().signal })
    while (!child.agent.session.events.some((event) => event.type === 'assistant/delta')) await tick()
    const dir = await crashCopy(first)
    await child.dispose()

    const outcome = await runWithInput(['resume', root.id, await hostConfig(), '--sessions', dir], 'are you back?\n')
    expect(outcome.stderr).to.include(`resumed tree ${root.id} with 1 descendants`)
    expect(outcome.stdout).to.equal('hello from the resumed root\n')
    expect(outcome.code).to.equal(0)
    // ended without disposing: no disposal recorded, so the tree can be resumed again
    const again = await durableHost(dir)
    const tree = await again.root.inprocessRun.resumeTree(root.id)
    expect(tree.agents.map((agent) => agent.id)).to.deep.equal([child.id])
    const texts = tree.root.session.events.filter((event) => event.type === 'assistant/message').map((event) => event.data)
    expect(texts.at(-1)).to.deep.include({ content: [{ type: 'text', text: 'hello from the resumed root' }] })
    await tree.dispose()
  })

  it('fails with the pinned reason when the tree cannot be resumed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'no-tree-'))
    removeAfterTest(dir)
    const outcome = await runWithInput(['resume', 'missing-root', await hostConfig(), '--sessions', dir], '')
    expect(outcome.code).to.equal(1)
    expect(outcome.stderr).to.include('cannot resume tree missing-root: session file "missing-root" not found')
    await access(dir)
  })
})
