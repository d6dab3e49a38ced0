// Installs the locked dependencies on a fresh clone, so that `npm start` and `npm test` work as the
// first commands run. Does nothing when node_modules matches package-lock.json already.
import { execSync } from 'node:child_process'
import { existsSync, statSync } from 'node:fs'

const marker = 'node_modules/.package-lock.json'
const stale = !existsSync(marker) || statSync(marker).mtimeMs < statSync('package-lock.json').mtimeMs
if (stale) {
  process.stderr.write('installing dependencies (npm ci)…\n')
  execSync('npm ci --no-audit --no-fund', { stdio: ['ignore', 'inherit', 'inherit'] })
}
