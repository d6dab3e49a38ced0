import { PassThrough } from 'node:stream'
import { expect } from 'chai'
import { attachApprovalPrompt } from '../../bin/approval-prompt.ts'
import { textOf } from '../../lib/content.ts'
import Approvals from '../../plugins/approvals/index.ts'
import type { SubagentRun } from '../../lib/types.ts'
import { type ApprovalHost, askingConfig, createApprovalHost } from '../support/approvals.ts'
import '../support/unhandled.ts'

/** What the prompt wrote, with a way to wait for a text to appear (a given number of times). */
class Screen {
  text = ''
  #waiters: (() => void)[] = []
  write(chunk: string): void {
    this.text += chunk
    for (const wake of this.#waiters.splice(0)) wake()
  }
  async waitFor(needle: string, times = 1): Promise<void> {
    while (this.text.split(needle).length - 1 < times) await new Promise<void>((resolve) => this.#waiters.push(resolve))
  }
}

const PROMPT = 'approve? [y/n/a] '
const ACKNOWLEDGE = 'the request on screen was decided elsewhere: press Enter to go on'

describe('the CLI approval prompt (bin/approval-prompt.ts)', () => {
  let host: ApprovalHost
  let input: PassThrough
  let screen: Screen
  let stop: (() => Promise<void>) | undefined
  const runs: SubagentRun[] = []

  const attach = (interactive = true, extra: { defaultTimeoutMs?: number } = {}) => {
    stop = attachApprovalPrompt(host.root, { input, output: screen, interactive, locale: 'en-US', ...extra })
  }

  const start = async (label: string, calls: unknown[], options?: { steps?: 'one' | 'each' }) => {
    const run = await host.child(label, calls, options)
    runs.push(run)
    return run
  }

  beforeEach(async () => {
    host = await createApprovalHost()
    input = new PassThrough()
    screen = new Screen()
  })

  afterEach(async () => {
    await stop?.()
    stop = undefined
    for (const run of runs.splice(0)) await run.dispose()
    await host.root.agents.disposeAll()
  })

  it("shows the asking child's label, depth and path, the tool and its arguments as pretty JSON, and runs the call on y", async () => {
    attach()
    const run = await start('release', [{ target: 'production' }])
    await screen.waitFor(PROMPT)
    const path = `root ${host.parent.id.slice(0, 8)} › release ${run.agent.id.slice(0, 8)}`
    expect(screen.text).to.equal(
      [
        `approval needed: child "release" · depth 1 · path ${path}`,
        '  tool       deploy',
        '  arguments  {',
        '               "target": "production"',
        '             }',
        '  y = approve · n [reason] = deny · a = approve always in this tree',
        PROMPT,
      ].join('\n'),
    )
    input.write('y\n')
    const result = await run.result
    expect(host.deployed).to.deep.equal([{ target: 'production' }])
    expect(textOf(result.output)).to.equal('deployed to production')
    expect(screen.text).to.include(`${PROMPT}approved: child "release" runs deploy (user)\n`)
  })

  it('denies on n with the reason typed after it, and the model reads that reason', async () => {
    attach()
    const run = await start('release', [{ target: 'production' }])
    await screen.waitFor(PROMPT)
    input.write('n not on a Friday\n')
    const result = await run.result
    expect(host.deployed).to.deep.equal([])
    expect(textOf(result.output)).to.equal('Error: tool call "deploy" was denied: not on a Friday')
    expect(screen.text).to.include(`${PROMPT}denied: child "release" may not run deploy: not on a Friday (user)\n`)
  })

  it('approves on a and remembers it for the tree: the next call of the tool runs without asking', async () => {
    attach()
    const run = await start('release', [{ target: 'staging' }, { target: 'production' }], { steps: 'each' })
    await screen.waitFor(PROMPT)
    input.write('a\n')
    await run.result
    expect(host.deployed).to.deep.equal([{ target: 'staging' }, { target: 'production' }])
    expect(screen.text.split(PROMPT)).to.have.length(2)
    expect(screen.text).to.include('approved: child "release" runs deploy, and later calls of deploy in this tree run without asking (user)')
  })

  it('asks again after an answer it does not know, deciding nothing', async () => {
    attach()
    const run = await start('release', [{ target: 'production' }])
    await screen.waitFor(PROMPT)
    input.write('maybe\n')
    await screen.waitFor(PROMPT, 2)
    expect(screen.text).to.include('"maybe" is not an answer: type y, n (optionally followed by a reason) or a\n')
    expect(host.root.approvals.pending()).to.have.length(1)
    input.write('y\n')
    await run.result
    expect(host.deployed).to.have.length(1)
  })

  it('queues a request asked while another is on screen, and shows it once the first is answered', async () => {
    attach()
    const run = await start('release', [{ target: 'eu' }, { target: 'us' }])
    await screen.waitFor('(1 waiting before it)')
    expect(screen.text.split(PROMPT)).to.have.length(2)
    expect(screen.text).to.include('"target": "eu"').and.not.include('"target": "us"')
    input.write('y\n')
    await screen.waitFor(PROMPT, 2)
    expect(screen.text).to.include('"target": "us"')
    input.write('n\n')
    const result = await run.result
    expect(host.deployed).to.deep.equal([{ target: 'eu' }])
    expect(textOf(result.output)).to.equal('deployed to eu\nError: tool call "deploy" was denied: denied by the user')
  })

  it('lets other agents run and finish while a request waits for its answer', async () => {
    attach()
    const asking = await start('release', [{ target: 'production' }])
    await screen.waitFor(PROMPT)
    const other = await start('notes', [])
    expect((await other.result).stopReason).to.equal('completed')
    expect(host.deployed).to.deep.equal([])
    input.write('y\n')
    expect((await asking.result).stopReason).to.equal('completed')
  })

  it('moves on when the request on screen is decided elsewhere, and does not take the next answer for it', async () => {
    attach()
    const run = await start('release', [{ target: 'eu' }, { target: 'us' }])
    await screen.waitFor('(1 waiting before it)')
    const [first] = host.root.approvals.pending()
    await host.root.approvals.decide(first!.id, { approved: false, reason: 'decided on the page' })
    await screen.waitFor(ACKNOWLEDGE)
    expect(screen.text).to.include('denied: child "release" may not run deploy: decided on the page (user)')
    input.write('\n')
    await screen.waitFor(PROMPT, 2)
    input.write('y\n')
    const result = await run.result
    expect(host.deployed).to.deep.equal([{ target: 'us' }])
    expect(textOf(result.output)).to.equal('Error: tool call "deploy" was denied: decided on the page\ndeployed to us')
  })

  it('takes an answer typed for a request decided elsewhere as an acknowledgement, never as the answer to the next one', async () => {
    attach()
    const run = await start('release', [{ target: 'eu' }, { target: 'us' }])
    await screen.waitFor('(1 waiting before it)')
    const [first, second] = host.root.approvals.pending()
    await host.root.approvals.decide(first!.id, { approved: false, reason: 'decided on the page' })
    // the person was typing "y" for the first request: it arrives after the page decided it
    input.write('y\n')
    await screen.waitFor(PROMPT, 2)
    expect(host.root.approvals.pending().map((request) => request.id)).to.deep.equal([second!.id])
    expect(host.deployed).to.deep.equal([])
    input.write('n\n')
    const result = await run.result
    expect(host.deployed).to.deep.equal([])
    expect(textOf(result.output)).to.include('Error: tool call "deploy" was denied: denied by the user')
  })

  it('shows control characters of the arguments as text, cutting a long value with a marker', async () => {
    attach()
    const run = await start('release', [{ target: 'prod\u009b2J', note: `\x1b]0;owned\x07${'x'.repeat(300)}` }])
    await screen.waitFor(PROMPT)
    // cut at 200 characters of the value (ESC and BEL count one each); JSON then writes them as
    // \u escapes (text), and the C1 CSI it leaves raw is replaced
    expect(screen.text).to.include('"target": "prod\ufffd2J"')
    expect(screen.text).to.include(`"note": "\\u001b]0;owned\\u0007${'x'.repeat(190)}… [110 more characters]"`)
    // nothing but tab and line feed below U+0020, nothing in C1
    // biome-ignore lint/suspicious/noControlCharactersInRegex: what must not reach a terminal
    expect(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/.test(screen.text)).to.equal(false)
    input.write('n\n')
    await run.result
  })

  it('not interactive: prints each request, reads no answer, and the default timeout decides it', async () => {
    attach(false, { defaultTimeoutMs: 30 })
    const run = await start('release', [{ target: 'production' }])
    input.write('y\n')
    const result = await run.result
    expect(textOf(result.output)).to.equal('Error: tool call "deploy" was denied: no decision within 30 ms')
    expect(host.deployed).to.deep.equal([])
    expect(screen.text).to.include('no terminal to answer at: waiting for another answerer or the timeout\n')
    expect(screen.text).to.not.include(PROMPT)
    expect(screen.text).to.include('denied: child "release" may not run deploy: no decision within 30 ms (timeout)')
  })

  it('stops asking when its input ends, and the default timeout decides what waits', async () => {
    attach(true, { defaultTimeoutMs: 30 })
    const run = await start('release', [{ target: 'production' }])
    await screen.waitFor(PROMPT)
    input.end()
    expect(textOf((await run.result).output)).to.equal('Error: tool call "deploy" was denied: no decision within 30 ms')
    expect(screen.text).to.include(`${PROMPT}\nno more answers from this terminal (its input ended): waiting for another answerer or the timeout\n`)
    expect(screen.text).to.include('denied: child "release" may not run deploy: no decision within 30 ms (timeout)')
  })

  it("a config's own timeout wins over the prompt's default", async () => {
    await host.approvalsFiber.update(askingConfig({ timeout: 20 }))
    attach(false, { defaultTimeoutMs: 60_000 })
    const run = await start('release', [{ target: 'production' }])
    expect(textOf((await run.result).output)).to.equal('Error: tool call "deploy" was denied: no decision within 20 ms')
  })

  it('asks again after Approvals is unloaded and loaded again', async () => {
    attach()
    await host.approvalsFiber.dispose()
    await host.root.plugin(Approvals, askingConfig())
    const run = await start('release', [{ target: 'production' }])
    await screen.waitFor(PROMPT)
    input.write('y\n')
    expect(textOf((await run.result).output)).to.equal('deployed to production')
  })

  it('stops listening when stopped: no listener of its own is left', async () => {
    const before = host.snapshot().listeners
    attach()
    // the prompt listens from the moment Approvals is there: its inject scope applies on a later tick
    await new Promise((resolve) => setImmediate(resolve))
    expect(host.snapshot().listeners).to.be.greaterThan(before)
    await stop!()
    expect(host.snapshot().listeners).to.equal(before)
    const run = await start('release', [{ target: 'production' }])
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(screen.text).to.equal('')
    const [request] = host.root.approvals.pending()
    await host.root.approvals.decide(request!.id, { approved: true })
    expect(textOf((await run.result).output)).to.equal('deployed to production')
  })
})
