import { expect } from 'chai'
import type { Fiber } from 'cordis'
import type { BrowserContext } from 'playwright-core'
import type { SubagentRun } from '../../lib/types.ts'
import Inspector from '../../plugins/inspector/index.ts'
import InProcessRun from '../../plugins/inprocess-run/index.ts'
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
})
