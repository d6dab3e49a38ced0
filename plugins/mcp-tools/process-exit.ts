/**
 * Making sure a stdio server's process is gone: the SDK's close ends its input, then signals it,
 * but forgets the process as soon as it starts, so the plugin waits for the pid itself.
 */

/** Ms a stdio server gets to exit after the SDK's close, before it is killed. */
const EXIT_GRACE_MS = 5000

/** True while `pid` runs (or is not yet reaped). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Waits until `pid` is gone; kills it when it outlives `EXIT_GRACE_MS`. */
export async function ensureExited(pid: number): Promise<void> {
  const deadline = Date.now() + EXIT_GRACE_MS
  while (isAlive(pid)) {
    if (Date.now() > deadline) {
      try {
        process.kill(pid, 'SIGKILL')
      } catch {
        // gone meanwhile
      }
      // SIGKILL cannot be refused: wait (briefly) until the process is reaped
      const reaped = Date.now() + 1000
      while (isAlive(pid) && Date.now() < reaped) await new Promise((resolve) => setTimeout(resolve, 20))
      return
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
