/**
 * Entries applied but waiting for a service that nothing provides: cordis keeps such a fiber
 * pending, silently, so the loader names them.
 */
import type { Context, Fiber } from 'cordis'

const kPending = 0 // cordis FiberState.PENDING: waiting for an injected service

/** The services `fiber` waits for that `root` does not provide, in `inject` order; empty unless it is pending. */
export function missingServices(root: Context, fiber: Fiber | undefined): string[] {
  if (!fiber || fiber.state !== kPending) return []
  return Object.keys(fiber.inject).filter((name) => root.get(name) === undefined)
}
