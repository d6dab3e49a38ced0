/**
 * Depth arithmetic of the driver's entry checks (SPEC §2.1 steps 1, 3, 4, 5). Pure: no cordis,
 * no I/O. Each check throws the built-in or package error SPEC names, with its exact message.
 */
import { SubagentDepthError } from '../errors.ts'

const MAX_DEPTH_MESSAGE = 'subagent maxDepth must be a non-negative safe integer'
const SUBAGENT_DEPTH_MESSAGE = 'agent subagentDepth must be a non-negative safe integer'
const CHILD_DEPTH_MESSAGE = 'subagent child depth exceeds the safe-integer range'

/** True for a safe integer ≥ 0 that is not `-0` (NaN, fractions, `2 ** 53` and non-numbers are false). */
export function isNonNegativeSafeInteger(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 0 && !Object.is(value, -0)
}

/**
 * Checks a request's `maxDepth` (SPEC §2.1.1): `undefined` passes. Throws `TypeError`
 * `subagent maxDepth must be a non-negative safe integer` for anything else that is not one.
 */
export function assertMaxDepth(maxDepth: unknown): asserts maxDepth is number | undefined {
  if (maxDepth !== undefined && !isNonNegativeSafeInteger(maxDepth)) throw new TypeError(MAX_DEPTH_MESSAGE)
}

/**
 * The parent's depth (SPEC §2.1.3): max of the header's `delegationDepth` and the runtime
 * `subagentDepth`, each defaulting to 0. The header is authoritative: options may deepen the count,
 * never lower it. Throws `TypeError` `agent subagentDepth must be a non-negative safe integer`
 * when a present runtime depth is not one.
 */
export function parentDepth(headerDepth: number | undefined, runtimeDepth: unknown): number {
  if (runtimeDepth !== undefined && !isNonNegativeSafeInteger(runtimeDepth)) throw new TypeError(SUBAGENT_DEPTH_MESSAGE)
  return Math.max(headerDepth ?? 0, runtimeDepth ?? 0)
}

/**
 * The child's depth: `parent + 1` (SPEC §2.1.4). Throws `RangeError`
 * `subagent child depth exceeds the safe-integer range` when that is not a safe integer.
 */
export function childDepth(parent: number): number {
  const depth = parent + 1
  if (!Number.isSafeInteger(depth)) throw new RangeError(CHILD_DEPTH_MESSAGE)
  return depth
}

/**
 * A depth cap lowered to `cap` (a hook's `capDepth(cap)`): the smaller of `current` and `cap`, so a
 * cap can only go down. Throws `TypeError` `<field> must be a non-negative safe integer` for
 * anything else (`-1`, `1.5`, `NaN`, `Infinity`, a string): a policy's mistake must not pass silently.
 */
export function lowerCap(current: number, cap: unknown, field: string): number {
  if (!isNonNegativeSafeInteger(cap)) throw new TypeError(`${field} must be a non-negative safe integer`)
  return cap < current ? cap : current
}

/** The smallest defined cap; `Infinity` when every cap is `undefined` (or none is given). */
export function effectiveCap(...caps: (number | undefined)[]): number {
  let cap = Number.POSITIVE_INFINITY
  for (let i = 0; i < caps.length; i++) {
    const candidate = caps[i]
    if (candidate !== undefined && candidate < cap) cap = candidate
  }
  return cap
}

/**
 * Enforces the absolute, inclusive cap (SPEC §2.1.5): throws `SubagentDepthError(depth, cap)`
 * (`subagent depth <depth> exceeds maxDepth <cap>`) when `depth > cap`; cap 0 forbids any child.
 */
export function assertWithinCap(depth: number, cap: number): void {
  if (depth > cap) throw new SubagentDepthError(depth, cap)
}
