/**
 * The host config file: YAML text → ordered plugin entries, and a plugin's config checked against
 * its `Config` schema. Plain code: reads files, registers nothing.
 */
import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { isDeepStrictEqual } from 'node:util'
import { parse } from 'yaml'
import { declaredKeyNames, type SchemaShape, type UnknownKey, unknownConfigKeys } from '../../lib/config-keys.ts'
import { SubagentError } from '../../lib/errors.ts'

/** Where an entry's plugin comes from: a file (absolute path) or a package name. */
export type EntrySource = { kind: 'file'; file: string } | { kind: 'package'; name: string }

/** One entry of a host config, as written (paths already resolved). */
export interface EntrySpec {
  /** The entry's stable name: its key under `plugins`. */
  readonly key: string
  readonly source: EntrySource
  /** The module export that holds the plugin. */
  readonly export: string
  /** The plugin's config, unvalidated (`undefined` when the entry has none). */
  readonly config: unknown
  readonly disabled: boolean
}

export interface HostConfig {
  /** Absolute path of the config file. */
  readonly file: string
  /** The well-formed entries, in file order. */
  readonly entries: readonly EntrySpec[]
  /** One error per malformed entry (its `entry` names it); the other entries are unaffected. */
  readonly problems: readonly HostConfigError[]
}

/** A host config or one of its entries is unusable. `entry` names the entry, when there is one. */
export class HostConfigError extends SubagentError {
  override readonly name = 'HostConfigError'
  constructor(message: string, readonly entry?: string, options?: ErrorOptions) {
    super('CONFIG', entry === undefined ? message : `plugin "${entry}": ${message}`, options)
  }
}

const entryFields = new Set(['path', 'package', 'export', 'config', 'disabled'])
const entryName = /^[A-Za-z][\w-]*$/

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function readEntry(key: string, value: unknown, base: string): EntrySpec {
  if (!entryName.test(key)) {
    throw new HostConfigError('the name must start with a letter and hold only letters, digits, "-" and "_"', key)
  }
  if (!isMapping(value)) throw new HostConfigError('the entry must be a mapping', key)
  for (const field of Object.keys(value)) {
    if (!entryFields.has(field)) throw new HostConfigError(`unknown field "${field}"`, key)
  }
  const { path, package: name, export: exported = 'default', disabled = false } = value
  if ((path === undefined) === (name === undefined)) {
    throw new HostConfigError('needs exactly one of "path" or "package"', key)
  }
  for (const [field, text] of [['path', path], ['package', name], ['export', exported]] as const) {
    if (text !== undefined && (typeof text !== 'string' || !text)) {
      throw new HostConfigError(`"${field}" must be a non-empty string`, key)
    }
  }
  if (typeof disabled !== 'boolean') throw new HostConfigError('"disabled" must be true or false', key)
  const source: EntrySource =
    path !== undefined ? { kind: 'file', file: resolve(base, path as string) } : { kind: 'package', name: name as string }
  return { key, source, export: exported as string, config: value.config ?? undefined, disabled }
}

/**
 * Parses a host config. Entries keep file order; `path` is resolved against the config file's
 * folder. A malformed entry becomes a problem naming it; a malformed file throws `HostConfigError`.
 */
export function parseHostConfig(text: string, file: string): HostConfig {
  let document: unknown
  try {
    document = parse(text)
  } catch (error) {
    // the yaml package's message ends with a code frame (the line, a caret under the column): keep it
    throw new HostConfigError(`host config "${file}": ${(error as Error).message.trimEnd()}`, undefined, { cause: error })
  }
  if (document === null || document === undefined) return { file, entries: [], problems: [] }
  if (!isMapping(document)) throw new HostConfigError(`host config "${file}" must be a mapping with a "plugins" mapping`)
  for (const field of Object.keys(document)) {
    if (field !== 'plugins') throw new HostConfigError(`host config "${file}" has unknown field "${field}"`)
  }
  const plugins = document.plugins ?? {}
  if (!isMapping(plugins)) throw new HostConfigError(`host config "${file}": "plugins" must be a mapping`)
  const base = dirname(file)
  const entries: EntrySpec[] = []
  const problems: HostConfigError[] = []
  for (const [key, value] of Object.entries(plugins)) {
    try {
      entries.push(readEntry(key, value, base))
    } catch (error) {
      problems.push(error as HostConfigError)
    }
  }
  return { file, entries, problems }
}

/** Reads and parses the host config at `file` (absolute); `text` is what was read. */
export function readHostConfig(file: string): { config: HostConfig; text: string } {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
    throw new HostConfigError(`cannot read host config "${file}": ${(error as Error).message}`, undefined, { cause: error })
  }
  return { config: parseHostConfig(text, file), text }
}

/** True when both entries take their plugin from the same module export. */
export function isSameSource(a: EntrySpec, b: EntrySpec): boolean {
  return isDeepStrictEqual(a.source, b.source) && a.export === b.export
}

interface StandardIssue {
  message: string
  path?: readonly (PropertyKey | { key: PropertyKey })[]
}

interface StandardSchemaLike {
  '~standard': { validate(value: unknown): { issues?: readonly StandardIssue[] } | Promise<unknown> }
}

function hasStandardSchema(value: unknown): value is StandardSchemaLike {
  const standard = (value as { '~standard'?: { validate?: unknown } } | undefined)?.['~standard']
  return typeof standard?.validate === 'function'
}

/** The value at `path` in `config`, or `undefined` where the path does not lead. */
function valueAt(config: unknown, path: readonly (PropertyKey | { key: PropertyKey })[]): unknown {
  let value = config
  for (const part of path) {
    if (typeof value !== 'object' || value === null) return undefined
    value = (value as Record<PropertyKey, unknown>)[typeof part === 'object' ? part.key : part]
  }
  return value
}

function issueText(issue: StandardIssue, config: unknown): string {
  const path = (issue.path ?? []).map((part) => String(typeof part === 'object' ? part.key : part)).join('.')
  let message = issue.message
  // schemastery prints the value it got bare: a string is quoted, so '10' never reads as 10
  const got = valueAt(config, issue.path ?? [])
  if (typeof got === 'string' && message.endsWith(` but got ${got}`)) message = `${message.slice(0, -got.length)}${JSON.stringify(got)}`
  if (!path) return message
  // schemastery already starts its messages with "$.<path> "; keep the path once
  return `${path}: ${message.startsWith(`$.${path} `) ? message.slice(path.length + 3) : message}`
}

/** A schemastery schema (any copy of the package) carries its kind in a string `type`. */
function isSchemastery(schema: StandardSchemaLike): schema is StandardSchemaLike & SchemaShape {
  return typeof (schema as { type?: unknown }).type === 'string'
}

function unknownKeyText({ path, suggestion, known }: UnknownKey): string {
  if (suggestion !== undefined) return `unknown key "${path}" (did you mean "${suggestion}"?)`
  return known.length ? `unknown key "${path}" (valid keys: ${known.join(', ')})` : `unknown key "${path}" (it takes no keys)`
}

/**
 * Checks `config` against the plugin's `Config` (any Standard Schema, e.g. schemastery) before it
 * is applied. Throws `HostConfigError` `plugin "<entry>": <field>: <what the schema reports>`.
 * For a schemastery `Config`, a key it does not declare (nested objects included) throws first:
 * `plugin "<entry>": unknown key "<path>" (did you mean "<closest>"?)`. A plugin without `Config`
 * accepts anything.
 */
export function checkPluginConfig(entry: string, plugin: unknown, config: unknown): void {
  const schema = (plugin as { Config?: unknown } | undefined)?.Config
  if (!hasStandardSchema(schema)) return
  if (isSchemastery(schema)) {
    const unknown = unknownConfigKeys(schema, config)
    if (unknown.length) throw new HostConfigError(unknown.map(unknownKeyText).join('; '), entry)
  }
  let result: ReturnType<StandardSchemaLike['~standard']['validate']>
  try {
    result = schema['~standard'].validate(config)
  } catch (error) {
    throw new HostConfigError((error as Error).message, entry, { cause: error })
  }
  if (result instanceof Promise) {
    result.catch(() => {})
    throw new HostConfigError('its Config validates asynchronously, which cordis does not support', entry)
  }
  const issues = (result as { issues?: readonly StandardIssue[] }).issues
  if (issues?.length) throw new HostConfigError(issues.map((issue) => issueText(issue, config)).join('; '), entry)
}

/**
 * The config an entry applies: `config` plus each of `defaults` that the plugin's schemastery
 * `Config` declares and `config` does not set (the entry's own value always wins). Returned as is
 * when nothing is added, or when `config` is not a mapping (the schema reports that).
 */
export function withHostDefaults(plugin: unknown, config: unknown, defaults: Readonly<Record<string, unknown>>): unknown {
  const schema = (plugin as { Config?: unknown } | undefined)?.Config
  if (!hasStandardSchema(schema) || !isSchemastery(schema)) return config
  if (config !== undefined && !isMapping(config)) return config
  const declared = new Set(declaredKeyNames(schema) ?? [])
  const added = Object.entries(defaults).filter(([key, value]) => value !== undefined && declared.has(key) && config?.[key] === undefined)
  return added.length ? { ...Object.fromEntries(added), ...config } : config
}
