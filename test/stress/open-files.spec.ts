/**
 * Open-file limit, not part of the default `npm test`: 3,000 concurrent children with
 * `SessionFiles`, in a child process whose descriptor limit is 1,024 (`ulimit -n`, soft and hard,
 * so Node cannot raise it). Every file must hold the header and every event of its session, and
 * every child must resume from it with exactly those events. OPEN_FILES_CHILDREN=<n> changes the
 * number of children.
 */
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { expect } from 'chai'
import type { OpenFilesReport } from './open-files-scenario.ts'

const CHILDREN = Number(process.env.OPEN_FILES_CHILDREN ?? 3000)
const LIMIT = 1024
const scenario = fileURLToPath(new URL('./open-files-scenario.ts', import.meta.url))

function runScenario(): Promise<OpenFilesReport> {
  const command = `ulimit -n ${LIMIT} && OPEN_FILE_LIMIT=$(ulimit -n) exec node --import tsx "$0" ${CHILDREN}`
  return new Promise((resolve, reject) => {
    execFile('bash', ['-c', command, scenario], { maxBuffer: 16 * 2 ** 20 }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`the scenario failed: ${error.message}\n${stderr}`))
      try {
        resolve(JSON.parse(stdout.trim().split('\n').at(-1)!) as OpenFilesReport)
      } catch {
        reject(new Error(`the scenario printed no report:\n${stdout}\n${stderr}`))
      }
    })
  })
}

describe(`SessionFiles under an open-file limit of ${LIMIT}`, () => {
  it(`writes a complete, resumable file for each of ${CHILDREN} concurrent children`, async () => {
    const report = await runScenario()
    if (process.env.RELIABILITY_REPORT) console.log(JSON.stringify(report))
    expect(report.openFileLimit).to.equal(String(LIMIT))
    expect(report).to.deep.include({ children: CHILDREN, complete: CHILDREN, missing: 0, incomplete: 0, resumed: CHILDREN })
    expect(report.resumeFailures).to.deep.equal([])
    expect(report.warnings).to.deep.equal([])
  })
})
