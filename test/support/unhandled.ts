/**
 * Fails the run on any unhandled promise rejection (mocha alone lets them pass silently).
 * Load it once for the whole run with `"require": ["test/support/unhandled.ts"]` in `.mocharc.json`
 * (a root hook plugin); a spec file that imports it also installs it for single-file runs.
 */
import { format } from 'node:util'

const seen: string[] = []
// mocha re-emits each rejection on `process`: count every promise once
const counted = new WeakSet<Promise<unknown>>()
let isInstalled = false

function record(reason: unknown, promise: Promise<unknown>): void {
  if (counted.has(promise)) return
  counted.add(promise)
  seen.push(reason instanceof Error ? (reason.stack ?? reason.message) : format(reason))
}

function install(): void {
  if (isInstalled) return
  isInstalled = true
  process.on('unhandledRejection', record)
}

/** Throws when rejections went unhandled since the last call, naming where they were noticed. */
function assertNoneUnhandled(where: string): void {
  if (!seen.length) return
  const reasons = seen.splice(0)
  throw new Error(`${reasons.length} unhandled rejection(s) during ${where}:\n${reasons.join('\n')}`)
}

export const mochaHooks = {
  beforeAll(): void {
    install()
  },
  afterEach(this: Mocha.Context): void {
    assertNoneUnhandled(`"${this.currentTest?.fullTitle() ?? 'a test'}"`)
  },
  afterAll(): void {
    assertNoneUnhandled('the run')
  },
}

// imported by a spec file (mocha's globals exist): register the same hooks at the root
if (typeof afterEach === 'function' && typeof before === 'function') {
  before(mochaHooks.beforeAll)
  afterEach(mochaHooks.afterEach)
  after(mochaHooks.afterAll)
}
