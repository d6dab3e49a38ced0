import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { expect } from 'chai'
import type { Fiber } from 'cordis'
import type { Page } from 'playwright-core'
import { textOf } from '../../lib/content.ts'
import type { SubagentRun } from '../../lib/types.ts'
import Inspector, { DECISION_PATH, SECRET_HEADER } from '../../plugins/inspector/index.ts'
import { type ApprovalHost, createApprovalHost } from '../support/approvals.ts'
import { hasChromium, type LaunchedBrowser, launchChromium, missingChromiumMessage } from '../support/chromium.ts'
import '../support/unhandled.ts'

/** `UPDATE_SCREENSHOT=1 npx mocha test/inspector/browser-approvals.spec.ts` refreshes the image in docs/. */
const screenshotPath = process.env.UPDATE_SCREENSHOT ? new URL('../../docs/inspector-approvals.png', import.meta.url).pathname : undefined

describe('inspector approvals panel in a real browser (Chromium)', function () {
  this.timeout(60_000)
  let host: ApprovalHost
  let fiber: Fiber
  let launched: LaunchedBrowser
  let page: Page
  const runs: SubagentRun[] = []

  before(function () {
    if (!hasChromium()) {
      console.log(`    ${missingChromiumMessage}`)
      this.skip()
    }
  })

  beforeEach(async () => {
    host = await createApprovalHost()
    fiber = host.root.plugin(Inspector, {})
    await fiber
    launched = await launchChromium({ width: 1280, height: 640 })
    page = await launched.browser.newPage()
  })

  afterEach(async () => {
    await launched?.close()
    for (const run of runs.splice(0)) await run.dispose()
    await fiber.dispose()
    await host.root.agents.disposeAll()
  })

  const child = async (label: string, calls: unknown[]) => {
    const run = await host.child(label, calls)
    runs.push(run)
    return run
  }

  it('shows a request as it is asked; clicking Approve runs the call', async () => {
    await page.goto(host.root.inspector.url)
    const run = await child('release', [{ target: 'production', note: 'tinyqueue 2.0.0, dist-tag latest' }])
    const card = page.locator('.approval', { hasText: 'child "release" asks to run deploy' })
    await card.waitFor()
    expect(await card.locator('.path').textContent()).to.equal(
      `depth 1 · path root ${host.parent.id.slice(0, 8)} › release ${run.agent.id.slice(0, 8)}`,
    )
    expect(JSON.parse((await card.locator('pre').textContent()) ?? '')).to.deep.equal({ target: 'production', note: 'tinyqueue 2.0.0, dist-tag latest' })
    // the asking child's transcript beside it: its task and the call waiting
    await page.locator('#rows tr', { hasText: 'release' }).click()
    await page.locator('#transcript .text', { hasText: 'deploy' }).waitFor()
    const shot = await page.screenshot({ ...(screenshotPath ? { path: screenshotPath } : {}) })
    expect(shot.length).to.be.greaterThan(10_000)
    await card.getByRole('button', { name: 'Approve' }).click()
    expect(textOf((await run.result).output)).to.equal('deployed to production')
    expect(host.deployed).to.deep.equal([{ target: 'production', note: 'tinyqueue 2.0.0, dist-tag latest' }])
    await card.waitFor({ state: 'detached' })
    expect(await page.locator('#approvals').isHidden()).to.equal(true)
  })

  it('sends Deny with the typed reason, which the model reads', async () => {
    await page.goto(host.root.inspector.url)
    const run = await child('release', [{ target: 'production' }])
    const card = page.locator('.approval')
    await card.locator('input').fill('freeze until Monday')
    await card.getByRole('button', { name: 'Deny' }).click()
    expect(textOf((await run.result).output)).to.equal('Error: tool call "deploy" was denied: freeze until Monday')
    expect(host.deployed).to.deep.equal([])
  })

  it("shows a model-written <img onerror> in a label and the arguments as text", async () => {
    await page.goto(host.root.inspector.url)
    const run = await child('<img src=x onerror="window.pwned=1">', [{ target: '<script>window.pwned=2</script>' }])
    const card = page.locator('.approval')
    await card.waitFor()
    expect(await card.locator('.who').textContent()).to.equal('child "<img src=x onerror="window.pwned=1">" asks to run deploy')
    expect(await page.evaluate(() => (globalThis as unknown as { pwned?: number }).pwned)).to.equal(undefined)
    expect(await page.locator('#approvals img, #approvals script').count()).to.equal(0)
    await card.getByRole('button', { name: 'Deny' }).click()
    await run.result
  })

  it('a forged POST decides nothing: from the page with a wrong secret, and from a page of another origin', async () => {
    const run = await child('release', [{ target: 'production' }])
    while (!host.root.approvals.pending().length) await new Promise((resolve) => setTimeout(resolve, 2))
    const [request] = host.root.approvals.pending()
    const inspectorUrl = host.root.inspector.url
    const decideUrl = new URL(DECISION_PATH, inspectorUrl).href
    const body = JSON.stringify({ id: request!.id, approved: true })
    // the inspector's own page, a made-up secret
    await page.goto(inspectorUrl)
    const status = await page.evaluate(
      async ({ decideUrl, body, header }) =>
        (await fetch(decideUrl, { method: 'POST', headers: { 'content-type': 'application/json', [header]: 'guessed' }, body })).status,
      { decideUrl, body, header: SECRET_HEADER },
    )
    expect(status).to.equal(403)
    // another origin: a page on another port of 127.0.0.1 posts as a form and with fetch
    const seen: string[] = []
    const evil: Server = createServer((_request, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><form id="f" method="POST" action="${decideUrl}" enctype="text/plain">
<input name='{"id":"${request!.id}","approved":true,"x":"' value='"}'></form>
<script>fetch(${JSON.stringify(decideUrl)}, { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: ${JSON.stringify(body)} })
  .finally(() => document.getElementById('f').submit())</script>`)
    })
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve))
    try {
      const evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}/`
      const responses: number[] = []
      page.on('response', (response) => {
        if (response.url() === decideUrl) responses.push(response.status())
      })
      page.on('request', (req) => {
        if (req.url() === decideUrl) seen.push(req.method())
      })
      await page.goto(evilUrl)
      // the form's submission navigates to the route: its 403 is the page then shown
      await page.waitForURL(decideUrl)
      while (responses.length < 2) await new Promise((resolve) => setTimeout(resolve, 10))
      expect(responses).to.deep.equal([403, 403])
    } finally {
      evil.closeAllConnections()
      await new Promise((resolve) => evil.close(resolve))
    }
    expect(seen).to.deep.equal(['POST', 'POST'])
    expect(host.root.approvals.pending().map((r) => r.id)).to.deep.equal([request!.id])
    expect(host.deployed).to.deep.equal([])
    await host.root.approvals.decide(request!.id, { approved: false })
    await run.result
  })
})
