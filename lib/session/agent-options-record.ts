/**
 * What of an agent's options its session header keeps (SPEC §14 "What is saved"), so a resumed
 * agent can call its model again: every option whose value is JSON data, except those whose name
 * looks like a secret. Plain code: no cordis, no I/O.
 */
import { jsonDataViolation } from '../json/json-data.ts'
import type { AgentOptions, JsonValue } from '../types.ts'

/** Option names never written to a store, whatever their value: credentials go by name. */
const secretName = /key|secret|token|password|passwd|credential|auth/i

/** Whether an option with this name is kept out of the header (a credential, by its name). */
export function isSecretOptionName(name: string): boolean {
  // `maxTokens` names a count, not a token
  return name !== 'maxTokens' && secretName.test(name)
}

/**
 * The options as the header records them: `options` itself when every option qualifies (the
 * common case: no copy), else a frozen copy without the secret-named ones and those whose value
 * is not JSON data (a function, a class instance, `undefined`). `undefined` when nothing is left.
 */
export function recordedAgentOptions(options: Readonly<AgentOptions>): Readonly<Record<string, JsonValue>> | undefined {
  let kept: Record<string, JsonValue> | undefined
  let keys = 0
  const names = Object.keys(options)
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!
    const value = options[name]
    if (value !== undefined && !isSecretOptionName(name) && jsonDataViolation(value, name) === undefined) {
      keys++
      if (kept) put(kept, name, value as JsonValue)
      continue
    }
    // the first option left out: copy what came before it
    kept ??= copyUpTo(options, names, i)
  }
  if (!keys) return undefined
  if (!kept) return options as Readonly<Record<string, JsonValue>>
  return Object.freeze(kept)
}

function copyUpTo(options: Readonly<AgentOptions>, names: readonly string[], end: number): Record<string, JsonValue> {
  const copy: Record<string, JsonValue> = {}
  for (let i = 0; i < end; i++) put(copy, names[i]!, options[names[i]!] as JsonValue)
  return copy
}

/** Sets an own property: an own `__proto__` key (JSON-parsed options) stays a plain key. */
function put(target: Record<string, JsonValue>, name: string, value: JsonValue): void {
  Object.defineProperty(target, name, { value, enumerable: true, writable: true, configurable: true })
}
