/**
 * Runs the `subagent-inprocess` command as a child process, the way `npm start` does (tsx).
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

export const projectRoot = fileURLToPath(new URL('../../', import.meta.url))

export interface CliOutcome {
  code: number | null
  stdout: string
  stderr: string
}

export function runCli(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<CliOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/subagent-inprocess.ts', ...args], {
      cwd: projectRoot,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (stdout += chunk))
    child.stderr.on('data', (chunk) => (stderr += chunk))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}
