/**
 * Imported first by the package entry, the host and the CLI: loading them fails at once, with the
 * supported version in the message, when the host's cordis is another release (npm does not stop
 * a second copy or the registry's 3.x `latest` from being installed next to us).
 */
import { createRequire } from 'node:module'
import { assertSupportedCordis } from '../lib/peer-dependency.ts'

// the package.json of the cordis that `import 'cordis'` from this file resolves to
const manifest: { version?: unknown } = createRequire(import.meta.url)('cordis/package.json')
assertSupportedCordis(manifest.version)
