import { expect } from 'chai'
import type { Fiber } from 'cordis'
import type { BrowserContext } from 'playwright-core'
import type { SubagentRun } from '../../lib/types.ts'
import Inspector from '../../plugins/inspector/index.ts'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
import TreeBudget from '../../plugins/tree-budget/index.ts'
import { hasChromium, type LaunchedBrowser, launchChromium, missingChromiumMessage } from '../support/chromium.ts'
import { createHost, type TestHost } from '../support/harness.ts'
import '../support/unhandled.ts'

/** `UPDATE_SCREENSHOT=1 npx mocha test/inspector/browser.spec.ts` refreshes the image of docs/watching.md. */
const screenshotPath = process.env.UPDATE_SCREENSHOT ? new URL('../../docs/inspector.png', import.meta.url).pathname : undefined

describe('inspector page in a real browser (Chromium)', function () {
  this.timeout(60_000)
  let host: TestHost
  let fiber: Fiber
  let launched: LaunchedBrowser
  let browser: BrowserContext

  before(function () {
    if (!hasChromium()) {
      console.log(`    ${missingChromiumMessage}`)
      this.skip()
    }
  })

  beforeEach(async () => {
    host = await createHost()
    await host.root.plugin(InProcessRun)
    fiber = host.root.plugin(Inspector, {})
    await fiber
    launched = await launchChromium()
    browser = launched.browser
  })

  afterEach(async () => {
    await launched?.close()
    await fiber.dispose()
    await host.root.agents.disposeAll()
  })

  it('shows the live tree and a model-written <script> as text', async () => {
    const parent = await host.agent()
    const start = (label: string) => host.root.inprocessRun.spawn({ parent, prompt: `task ${label}`, label, signal: new AbortController().signal })
    host.scripted.push({ text: '<script>window.pwned = true</script><b>not bold</b>', usage: { inputTokens: 120, outputTokens: 14 } })
    const done = await start('changelog')
    await done.result
    host.scripted.push(new Error('upstream 503'))
    const failed = await start('migration-note')
    await failed.result
    host.scripted.push('hang')
    const running: SubagentRun = await start('checklist')
    const page = await browser.newPage()
    await page.goto(host.root.inspector.url)
    await page.getByText('changelog').click()
    await page.locator('#transcript .text', { hasText: '<script>' }).waitFor()
    expect(await page.evaluate(() => (globalThis as unknown as { pwned?: boolean }).pwned)).to.equal(undefined)
    expect(await page.locator('#transcript b').count()).to.equal(0)
    expect(await page.locator('#rows tr').count()).to.equal(4)
    expect(await page.locator('#rows tr', { hasText: 'migration-note' }).locator('.bad').textContent()).to.equal('error')
    await page.locator('#rows tr', { hasText: 'checklist' }).locator('.run').waitFor()
    const shot = await page.screenshot({ ...(screenshotPath ? { path: screenshotPath } : {}) })
    expect(shot.length).to.be.greaterThan(10_000)
    await running.dispose()
    await Promise.all([done.dispose(), failed.dispose()])
  })

  it("keeps the time bars' scale and shows the subtree's tokens and the budget left on the parent, however long after the runs the page is opened", async () => {
    await host.root.plugin(TreeBudget, { maxTokens: 100, maxChildren: 10 })
    const parent = await host.agent()
    const runs: SubagentRun[] = []
    for (const [label, inputTokens] of [['first', 10], ['second', 20]] as const) {
      host.scripted.push({ text: 'done', usage: { inputTokens, outputTokens: 2 } })
      const run = await host.root.inprocessRun.spawn({ parent, prompt: label, label, signal: new AbortController().signal })
      await run.result
      runs.push(run)
    }
    // every run ended a while before the page is opened
    await new Promise((resolve) => setTimeout(resolve, 1500))
    const page = await browser.newPage()
    await page.goto(host.root.inspector.url)
    await page.locator('#rows tr', { hasText: 'second' }).waitFor()
    const reach = await page.$$eval('#rows .bar', (bars) =>
      Math.max(...bars.map((bar) => bar.getAttribute('style') ?? '').map((style) => Number.parseFloat(style.split('left:')[1]) + Number.parseFloat(style.split('width:')[1]))),
    )
    expect(reach).to.be.within(99, 101)
    const parentRow = page.locator('#rows tr').first()
    expect(await parentRow.locator('.tokens').textContent()).to.equal('0 / 0 · tree 30 / 4 · left 66 tokens, 8 children')
    expect(await page.locator('#rows tr', { hasText: 'first' }).locator('.tokens').textContent()).to.equal('10 / 2')
    for (const run of runs) await run.dispose()
  })
})
