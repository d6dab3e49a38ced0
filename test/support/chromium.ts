/**
 * Debian's Chromium (`/usr/bin/chromium`) driven by playwright-core, for the inspector page's
 * browser tests: no browser download, a fresh profile per launch.
 */
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type BrowserContext, chromium } from 'playwright-core'

export const CHROMIUM = '/usr/bin/chromium'

/** The line a browser test prints when it skips itself on a machine without Chromium. */
export const missingChromiumMessage = `skipped: ${CHROMIUM} is missing (apt-get install -y chromium); .ci/run installs it`

export function hasChromium(): boolean {
  return existsSync(CHROMIUM)
}

export interface LaunchedBrowser {
  browser: BrowserContext
  /** Closes the browser and removes its profile. */
  close(): Promise<void>
}

/** Headless Chromium with a fresh profile (playwright passes it as --user-data-dir). */
export async function launchChromium(viewport = { width: 1280, height: 520 }): Promise<LaunchedBrowser> {
  const profile = await mkdtemp(join(tmpdir(), 'inspector-chromium-'))
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    viewport,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  })
  return {
    browser,
    async close() {
      await browser.close()
      await rm(profile, { recursive: true, force: true })
    },
  }
}
